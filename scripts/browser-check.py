#!/usr/bin/env python3
"""browser-check.py KBENCH RUN.jsonl [RUN.jsonl ...] [--model SUITE MODEL] [--compare A B]
[--max-height PX] [--screenshot DIR] - open `kbench report RUN --format html` (and with --model: SUITE run on the emulator, then
`kbench model RUN --model MODEL --format html --with-report`, the report with the roll-up;
with --compare: `kbench compare A B --format html`, its table sorted by B/A)
in headless Chromium (Debian's `chromium`) and check, from the rendered DOM, that every chart
drew (each <svg class="chart"> has marks with a non-empty box) and none is taller than
MAX_CHART_PX, that clicking a column header of the case table sorts it (ascending, then
descending), that the filter hides the rows that do not match, that the table's container fits a
1400-px window (it scrolls instead of widening the page), that no element reaches beyond the
window's width unless a scrolling container clips it, that a report's first screen (1400 x 900)
holds its summary section whole, and that the page logged no console error; the page's height is
printed (--max-height PX fails a taller one). --screenshot DIR also saves each page's first
screen (first.png) and the whole page (page.png) as rendered. Exit 0 when all hold, 1 when one
does not, 77 (CTest: skipped) when chromium is not installed. Standard library only."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Appended to a copy of the report: runs after the report's own script, writes its findings
# as JSON into <pre id="kb-check">, which --dump-dom prints.
CHECK_JS = r"""
<script>
(function(){
var out={errors:[],charts:[],sorted:null,filtered:null,fits:null,wide:[],summary:null,page:null};
window.addEventListener('error',function(e){out.errors.push(String(e.message));});
try{
 document.querySelectorAll('svg.chart,svg.roofline').forEach(function(svg){
  var marks=svg.querySelectorAll('rect,circle');var drawn=0;
  marks.forEach(function(m){var b=m.getBBox();if(b.width>0&&b.height>0){drawn++;}});
  var box=svg.getBoundingClientRect();
  out.charts.push({kind:svg.getAttribute('data-chart')||'roofline',marks:marks.length,drawn:drawn,
                   width:box.width,height:box.height});});
 var vw=document.documentElement.clientWidth;
 function clipped(e){for(var p=e.parentElement;p;p=p.parentElement){var o=getComputedStyle(p).overflowX;
   if(o==='auto'||o==='scroll'||o==='hidden'){return true;}}return false;}
 document.querySelectorAll('body *').forEach(function(e){var b=e.getBoundingClientRect();
   if(b.width>0&&b.right>vw+1&&!clipped(e)&&out.wide.length<5){
     out.wide.push(e.tagName+(e.id?'#'+e.id:'')+(e.className&&e.className.baseVal===undefined?'.'+e.className:'')+
                   ' right '+Math.round(b.right)+' > '+vw);}});
 var sum=document.getElementById('summary');
 if(sum){var sb=sum.getBoundingClientRect();out.summary={top:sb.top,bottom:sb.bottom,height:window.innerHeight};}
 out.page={height:document.documentElement.scrollHeight,width:document.documentElement.scrollWidth};
 var inp=document.querySelector('input.filter');
 var t=inp?document.getElementById(inp.getAttribute('data-table')):document.querySelector('table.sortable');
 if(t){
  var ths=t.tHead.rows[0].cells,col=-1;
  for(var i=0;i<ths.length;i++){if(ths[i].textContent.indexOf(SORTCOL)===0){col=i;}}
  function vals(){var v=[];Array.prototype.forEach.call(t.tBodies[0].rows,function(r){
    var x=parseFloat(r.cells[col].textContent);if(!isNaN(x)){v.push(x);}});return v;}
  function mono(v,d){for(var i=1;i<v.length;i++){if(d*(v[i]-v[i-1])<0){return false;}}return true;}
  ths[col].click();var up=vals();ths[col].click();var down=vals();
  out.sorted={n:up.length,ascending:mono(up,1),descending:mono(down,-1)};
  var first=t.tBodies[0].rows[0].cells[0].textContent;
  inp.value=first;inp.dispatchEvent(new Event('input'));
  var shown=0;Array.prototype.forEach.call(t.tBodies[0].rows,function(r){if(r.style.display!=='none'){shown++;}});
  out.filtered={rows:t.tBodies[0].rows.length,shown:shown};
  var box=t.parentNode.getBoundingClientRect();
  out.fits={container:box.width,page:document.documentElement.scrollWidth,window:window.innerWidth};
 }
}catch(e){out.errors.push(String(e));}
var pre=document.createElement('pre');pre.id='kb-check';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);
})();
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


MAX_CHART_PX = 1600   # [px] a chart taller than this answers no question at a glance
FIRST_SCREEN = (1400, 900)   # [px] what a report's summary must fit in


def screenshots(browser, page, tmp, height, into):
    """The first screen and the whole page as PNGs in into/."""
    os.makedirs(into, exist_ok=True)
    for name, size in (("first.png", "1400,900"), ("page.png", "1400,%d" % max(900, min(height, 16000)))):
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=" + size, "--virtual-time-budget=5000",
                        "--user-data-dir=" + os.path.join(tmp, "profile-shot"),
                        "--screenshot=" + os.path.join(into, name), "file://" + page],
                       capture_output=True, timeout=180)


def check(kbench, run, browser, tmp, model=None, compare=None, max_height=None, shots=None):
    page = os.path.join(tmp, "report.html")
    sort_col = "B/A" if compare else "median_us"
    if compare:
        rc = subprocess.run([kbench, "compare", compare[0], compare[1], "--format", "html", "--out", page]).returncode
        if rc not in (0, 4):
            return ["kbench compare exited %d" % rc]
    elif model:
        subprocess.run([kbench, "model", run, "--model", model, "--format", "html", "--with-report", "--out", page],
                       check=True)
    else:
        subprocess.run([kbench, "report", run, "--format", "html", "--out", page], check=True)
    with open(page, encoding="utf-8") as f:
        html = f.read()
    plain = os.path.join(tmp, "plain.html")   # as written, for the screenshots
    with open(plain, "w", encoding="utf-8") as f:
        f.write(html)
    with open(page, "w", encoding="utf-8") as f:
        f.write(html.replace("</body>", CHECK_JS.replace("SORTCOL", json.dumps(sort_col)) + "</body>"))
    res = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                          "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                          "--user-data-dir=" + os.path.join(tmp, "profile"), "--dump-dom", "file://" + page],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="kb-check">(.*?)</pre>', res.stdout, re.S)
    problems = []
    if not m:
        return ["no result from the page (chromium exit %d): %s" % (res.returncode, res.stderr[-2000:])]
    out = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                     .replace("&amp;", "&"))
    console = [l for l in res.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "rror" in l)]
    problems += ["console: " + l for l in console] + ["page error: " + e for e in out["errors"]]
    if not out["charts"]:
        problems.append("no chart")
    if model and not any(c["kind"].startswith("model-") for c in out["charts"]):
        problems.append("no model roll-up chart")
    for c in out["charts"]:
        if c["marks"] == 0 or c["drawn"] != c["marks"] or c["width"] <= 0:
            problems.append("chart %s did not draw: %s" % (c["kind"], c))
        if c["height"] > MAX_CHART_PX:
            problems.append("chart %s is %d px tall (at most %d)" % (c["kind"], c["height"], MAX_CHART_PX))
    problems += ["wider than the window: " + w for w in out["wide"]]
    if not compare:   # a report opens with its summary, whole on the first screen
        sm = out["summary"]
        if not sm:
            problems.append("no summary section")
        elif sm["bottom"] > FIRST_SCREEN[1]:
            problems.append("the summary ends at %d px, below the first screen (%d px)" % (sm["bottom"], FIRST_SCREEN[1]))
    height = out["page"]["height"] if out["page"] else 0
    if max_height and height > max_height:
        problems.append("the page is %d px tall (at most %d)" % (height, max_height))
    if shots:
        screenshots(browser, plain, tmp, height, shots)
    s = out["sorted"]
    if not s or s["n"] < 2 or not s["ascending"] or not s["descending"]:
        problems.append("sorting by %s failed: %s" % (sort_col, s))
    fl = out["filtered"]
    if not fl or not (1 <= fl["shown"] < fl["rows"]):
        problems.append("filtering failed: %s" % fl)
    fits = out["fits"]
    if not fits or fits["page"] > fits["window"] or fits["container"] > 1400:
        problems.append("the table does not fit a 1400-px window: %s" % fits)
    print("%s: %d charts (%s), sorted %d rows, filter kept %s of %s, page %d px tall%s" % (
        run, len(out["charts"]), ", ".join(sorted({c["kind"].split("-")[0] for c in out["charts"]})),
        s["n"] if s else 0, fl and fl["shown"], fl and fl["rows"], height,
        ", summary ends at %d px" % out["summary"]["bottom"] if out["summary"] else ""))
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    browser = chromium()
    if not browser:
        print("chromium is not installed (apt-get install chromium): skipped")
        return 77
    args, model, compare, max_height, shots = sys.argv[2:], None, None, None, None
    if "--max-height" in args:
        i = args.index("--max-height")
        max_height, args = int(args[i + 1]), args[:i] + args[i + 2:]
    if "--screenshot" in args:
        i = args.index("--screenshot")
        shots, args = args[i + 1], args[:i] + args[i + 2:]
    if "--compare" in args:
        i = args.index("--compare")
        compare, args = args[i + 1:i + 3], args[:i] + args[i + 3:]
    if "--model" in args:
        i = args.index("--model")
        model, args = args[i + 1:i + 3], args[:i] + args[i + 3:]
    failed = 0
    for run in args:
        with tempfile.TemporaryDirectory() as tmp:
            into = os.path.join(shots, os.path.basename(run).replace(".jsonl", "")) if shots else None
            for p in check(sys.argv[1], run, browser, tmp, max_height=max_height, shots=into):
                print("FAIL %s: %s" % (run, p))
                failed = 1
    if model:
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "run.jsonl")
            subprocess.run([sys.argv[1], "run", model[0], "--backend", "emu", "--out", run, "--quiet"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for p in check(sys.argv[1], run, browser, tmp, model[1]):
                print("FAIL %s with %s: %s" % (model[0], model[1], p))
                failed = 1
    if compare:
        with tempfile.TemporaryDirectory() as tmp:
            for p in check(sys.argv[1], " vs ".join(compare), browser, tmp, compare=compare):
                print("FAIL compare %s: %s" % (" vs ".join(compare), p))
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
