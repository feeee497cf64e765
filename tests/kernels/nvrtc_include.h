/* nvrtc_include.h - reached through a quoted #include from nvrtc_include.cu, so
 * tests can tell that the include path reaches NVRTC. */
#ifndef NVRTC_INCLUDE_H
#define NVRTC_INCLUDE_H

#define KB_T_SCALE 3.0f

#endif
