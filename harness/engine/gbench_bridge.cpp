// gbench_bridge.cpp - the C API of gbench.h over Google Benchmark 1.7.
//
// The only C++ in kbench, because Google Benchmark's API is C++. It translates and
// nothing more: gbench.h's case -> one registered benchmark with manual time; the
// library's runs -> kb_gbench_run structs. Every decision (iteration counts, stopping,
// what the numbers mean) is the caller's.
#include "engine/gbench_bridge.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

namespace {

// Collects what Google Benchmark reports instead of printing it.
class Collector : public benchmark::BenchmarkReporter {
public:
    std::vector<Run> runs;
    bool ReportContext(const Context &) override { return true; }
    void ReportRuns(const std::vector<Run> &report) override
    {
        runs.insert(runs.end(), report.begin(), report.end());
    }
};

benchmark::Counter::Flags counter_flags(kb_gbench_counter_kind k)
{
    switch (k) {
    case KB_GBENCH_RATE: return benchmark::Counter::kIsRate;
    case KB_GBENCH_ITER_RATE: return benchmark::Counter::kIsIterationInvariantRate;
    default: return benchmark::Counter::kDefaults;
    }
}

// The benchmark body: one call of the C function per iteration, its time as manual time.
void body(benchmark::State &state, const kb_gbench_case *c)
{
    char msg[256];
    for (auto _ : state) {
        double us = 0;
        msg[0] = 0;
        if (c->fn(c->user, &us, msg, sizeof msg) != 0) {
            state.SkipWithError(msg[0] ? msg : "iteration function failed");
            break; // allowed after SkipWithError
        }
        state.SetIterationTime(us * 1e-6);
    }
    for (int i = 0; i < c->n_counters; i++)
        state.counters[c->counters[i].name] =
            benchmark::Counter(c->counters[i].value, counter_flags(c->counters[i].kind));
}

void copy_run(const benchmark::BenchmarkReporter::Run &in, const kb_gbench_case *c, kb_gbench_run *out)
{
    std::memset(out, 0, sizeof *out);
    out->aggregate = in.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate;
    std::snprintf(out->aggregate_name, sizeof out->aggregate_name, "%s", in.aggregate_name.c_str());
    out->percent = in.aggregate_unit == benchmark::kPercentage;
    out->repetition_index = in.repetition_index;
    out->iterations = in.iterations;
    // time_unit is kMicrosecond (set at registration), so these are [us] per iteration;
    // a percentage aggregate is a plain fraction that Google Benchmark leaves unscaled.
    out->real_time_us = out->percent ? in.real_accumulated_time : in.GetAdjustedRealTime();
    out->cpu_time_us = out->percent ? in.cpu_accumulated_time : in.GetAdjustedCPUTime();
    out->error = in.error_occurred;
    std::snprintf(out->error_message, sizeof out->error_message, "%s", in.error_message.c_str());
    for (int i = 0; i < c->n_counters; i++) {
        out->counters[i] = c->counters[i];
        auto it = in.counters.find(c->counters[i].name);
        if (it != in.counters.end()) {
            out->counters[i].value = it->second.value;
            out->n_counters = i + 1;
        }
    }
}

} // namespace

extern "C" kb_status kb_gbench_run_case(const kb_gbench_case *c, kb_gbench_result *out)
{
    std::memset(out, 0, sizeof *out);
    if (!c->fn || c->repetitions < 1 || c->iterations < 0 || c->n_counters < 0 ||
        c->n_counters > KB_GBENCH_MAX_COUNTERS)
        return KB_ERR_INPUT;
    Collector col;
    try {
        benchmark::ClearRegisteredBenchmarks();
        auto *b = benchmark::RegisterBenchmark(c->name && *c->name ? c->name : "kb_case", body, c);
        b->UseManualTime()->Unit(benchmark::kMicrosecond)->Repetitions(c->repetitions);
        if (c->iterations > 0)
            b->Iterations(c->iterations);
        else if (c->min_time_s > 0)
            b->MinTime(c->min_time_s);
        // "." matches the one benchmark registered above, whatever its name holds
        // (case ids contain regex metacharacters such as parentheses).
        benchmark::RunSpecifiedBenchmarks(&col, ".");
        benchmark::ClearRegisteredBenchmarks();
    } catch (const std::exception &) {
        benchmark::ClearRegisteredBenchmarks();
        return KB_ERR_INTERNAL;
    }
    if (col.runs.empty())
        return KB_ERR_INTERNAL;
    out->runs = static_cast<kb_gbench_run *>(std::calloc(col.runs.size(), sizeof *out->runs));
    if (!out->runs)
        return KB_ERR_OOM;
    for (const auto &run : col.runs)
        copy_run(run, c, &out->runs[out->n_runs++]);
    return KB_OK;
}

extern "C" void kb_gbench_result_free(kb_gbench_result *r)
{
    std::free(r->runs);
    r->runs = nullptr;
    r->n_runs = 0;
}

extern "C" const kb_gbench_run *kb_gbench_aggregate(const kb_gbench_result *r, const char *name)
{
    for (int i = 0; i < r->n_runs; i++)
        if (r->runs[i].aggregate && !std::strcmp(r->runs[i].aggregate_name, name))
            return &r->runs[i];
    return nullptr;
}

extern "C" void kb_gbench_counter_set(kb_gbench_counter *c, const char *name, double value,
                                      kb_gbench_counter_kind kind)
{
    std::snprintf(c->name, sizeof c->name, "%s", name);
    c->value = value;
    c->kind = kind;
}
