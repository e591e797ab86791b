/*
 * stream_file: streams a file over a sonde-switch connection and moves it between IPv4 and
 * IPv6 when told by a signal, SIGUSR1 for IPv4 and SIGUSR2 for IPv6, the way a middleware
 * takes orders from an operator or a monitoring script. The receiver writes what it got to a
 * file; comparing the two files' hashes shows nothing was lost, duplicated or reordered.
 *
 *   stream_file serve ADDRS OUT            listen on ADDRS (e.g. "127.0.0.1:0,[::1]:0"),
 *                                          print the bound addresses on one line, receive
 *                                          one stream into OUT
 *   stream_file send ADDRS FILE [PAUSE_US] connect over IPv4, print "connected", stream
 *                                          FILE in 64 KiB chunks (pausing PAUSE_US after
 *                                          each), switch on SIGUSR1 / SIGUSR2
 *
 * Both print their counters ("serve:" or "send:" then name value pairs) at the end.
 * Build: cc stream_file.c -I../include ../../../target/release/libsonde_switch_ffi.a \
 *        -lpthread -ldl -lm
 */
#include "sonde_switch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The family a signal asked for: 0, AF_INET or AF_INET6. */
static volatile sig_atomic_t wanted;

static void on_signal(int sig) { wanted = sig == SIGUSR1 ? AF_INET : AF_INET6; }

static int fail(const char *what, long rc) {
    fprintf(stderr, "stream_file: %s: %s (%s)\n", what, sonde_switch_strerror((int)rc),
            sonde_switch_last_error());
    return 1;
}

static void print_stats(const char *who, const SondeSwitchConn *c) {
    SondeSwitchStats s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    int rc = sonde_switch_stats(c, &s);
    if (rc < 0) {
        fail("stats", rc);
        return;
    }
    printf("%s: written %llu received %llu switches %llu recoveries %llu replayed %llu "
           "duplicates %llu sent_ipv4 %llu sent_ipv6 %llu received_ipv4 %llu "
           "received_ipv6 %llu max_stall_us %lld\n",
           who, (unsigned long long)s.written, (unsigned long long)s.received,
           (unsigned long long)s.switches, (unsigned long long)s.recoveries,
           (unsigned long long)s.replayed, (unsigned long long)s.duplicates,
           (unsigned long long)s.sent_ipv4, (unsigned long long)s.sent_ipv6,
           (unsigned long long)s.received_ipv4, (unsigned long long)s.received_ipv6,
           (long long)s.max_stall_us);
    fflush(stdout);
}

static unsigned char buf[64 * 1024];

static int serve(const char *addrs, const char *path) {
    SondeSwitchListener *l;
    SondeSwitchConn *c;
    char bound[512];
    long rc = sonde_switch_listen(addrs, NULL, &l);
    if (rc < 0)
        return fail("listen", rc);
    if (sonde_switch_listener_addrs(l, bound, sizeof bound) < 0)
        return fail("listener addresses", -1);
    printf("%s\n", bound);
    fflush(stdout);
    rc = sonde_switch_accept(l, 30000, &c);
    if (rc < 0)
        return fail("accept", rc);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    for (;;) {
        ssize_t n = sonde_switch_recv(c, buf, sizeof buf, 0);
        if (n < 0)
            return fail("recv", n);
        if (n == 0)
            break;
        if (fwrite(buf, 1, (size_t)n, f) != (size_t)n) {
            perror(path);
            return 1;
        }
    }
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    print_stats("serve", c);
    rc = sonde_switch_close(c);
    sonde_switch_listener_close(l);
    return rc < 0 ? fail("close", rc) : 0;
}

static int send_file(const char *addrs, const char *path, long pause_us) {
    struct sigaction sa;
    SondeSwitchConn *c;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    long rc = sonde_switch_connect(addrs, AF_INET, NULL, &c);
    if (rc < 0)
        return fail("connect", rc);
    printf("connected\n");
    fflush(stdout);
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        size_t off = 0;
        while (off < n) {
            ssize_t k = sonde_switch_send(c, buf + off, n - off, 0);
            if (k < 0)
                return fail("send", k);
            off += (size_t)k;
        }
        int family = wanted;
        if (family) {
            wanted = 0;
            rc = sonde_switch_switch(c, family);
            if (rc < 0)
                return fail("switch", rc);
        }
        if (pause_us > 0)
            usleep((useconds_t)pause_us);
    }
    fclose(f);
    print_stats("send", c);
    rc = sonde_switch_close(c);
    return rc < 0 ? fail("close", rc) : 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "serve") == 0)
        return serve(argv[2], argv[3]);
    if (argc >= 4 && strcmp(argv[1], "send") == 0)
        return send_file(argv[2], argv[3], argc >= 5 ? atol(argv[4]) : 0);
    fprintf(stderr, "usage: stream_file serve ADDRS OUT | send ADDRS FILE [PAUSE_US]\n");
    return 2;
}
