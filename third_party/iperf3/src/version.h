/* Written by hand for sonde's vendored build (configure generates it from version.h.in). */
#define IPERF_VERSION "3.21+"
