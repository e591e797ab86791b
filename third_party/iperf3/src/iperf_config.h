/*
 * iperf_config.h for Linux with glibc, written by hand for sonde's vendored build (it replaces
 * the header iperf3's configure script would generate). Every facility below is one Debian 12
 * and later provide; OpenSSL (authentication) and SCTP are left out on purpose, so the build
 * needs only a C compiler and libc.
 */
#ifndef IPERF_CONFIG_H
#define IPERF_CONFIG_H

#define CAN_BIND_TO_DEVICE 1
#define HAVE_CLOCK_GETTIME 1
#define HAVE_CLOCK_NANOSLEEP 1
#define HAVE_CPU_AFFINITY 1
#define HAVE_DAEMON 1
#define HAVE_DLFCN_H 1
#define HAVE_DONT_FRAGMENT 1
#define HAVE_ENDIAN_H 1
#define HAVE_FLOWLABEL 1
#define HAVE_GETLINE 1
#define HAVE_INTTYPES_H 1
#define HAVE_IPPROTO_MPTCP 1
#define HAVE_IP_MTU_DISCOVER 1
#define HAVE_LINUX_TCP_H 1
#define HAVE_MSG_TRUNC 1
#define HAVE_NANOSLEEP 1
#define HAVE_POLL_H 1
#define HAVE_PTHREAD 1
#define HAVE_PTHREAD_PRIO_INHERIT 1
#define HAVE_SCHED_SETAFFINITY 1
#define HAVE_SENDFILE 1
#define HAVE_SOCKET_SHUTDOWN_SHUT_WR 1
#define HAVE_SO_BINDTODEVICE 1
#define HAVE_SO_MAX_PACING_RATE 1
#define HAVE_STDATOMIC_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_SOCKET_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_TCP_CONGESTION 1
#define HAVE_TCP_INFO_SND_WND 1
#define HAVE_TCP_KEEPALIVE 1
#define HAVE_TCP_USER_TIMEOUT 1
#define HAVE_UDP_GRO 1
#define HAVE_UDP_SEGMENT 1
#define HAVE_UNISTD_H 1
#define STDC_HEADERS 1

#define PACKAGE "iperf"
#define PACKAGE_BUGREPORT "https://github.com/esnet/iperf"
#define PACKAGE_NAME "iperf"
#define PACKAGE_STRING "iperf 3.21+"
#define PACKAGE_TARNAME "iperf"
#define PACKAGE_URL "https://software.es.net/iperf/"
#define PACKAGE_VERSION "3.21+"
#define VERSION "3.21+"

#endif /* IPERF_CONFIG_H */
