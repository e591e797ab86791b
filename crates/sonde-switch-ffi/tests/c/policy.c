/* The switching policy through the C functions, as a C program calls them: bad arguments
 * are -EINVAL with the last-error text; a policy set on the connecting end moves the stream
 * when its verdicts say so (confirm 2: the second verdict in a row moves it), holds after a
 * switch, ignores a margin below its own; the accepting end's policy cannot move the stream
 * (-EPERM); and the bytes sent around the switches arrive once and in order.
 * Built and run by tests/c_policy.rs; prints "policy: ok" and exits 0, or says what failed. */

#include "sonde_switch.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "line %d: %s (last error: %s)\n", __LINE__, what,             \
                    sonde_switch_last_error());                                            \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

#define ERROR_SAYS(text) (strstr(sonde_switch_last_error(), text) != NULL)

static int family_of(const SondeSwitchConn *c) {
    SondeSwitchStats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    return sonde_switch_stats(c, &st) == 0 ? st.family : -1;
}

static SondeSwitchVerdict verdict(int better, double margin, double confidence) {
    SondeSwitchVerdict v;
    memset(&v, 0, sizeof v);
    v.size = sizeof v;
    v.better = better;
    v.margin_pct = margin;
    v.confidence = confidence;
    v.measure = "median latency";
    return v;
}

/* Hands `c` one verdict; the return value, the decision in *d. */
static int decide(SondeSwitchConn *c, int better, double margin, double confidence,
                  SondeSwitchDecision *d) {
    SondeSwitchVerdict v = verdict(better, margin, confidence);
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    return sonde_switch_verdict(c, &v, d);
}

static int bad_arguments(void) {
    SondeSwitchPolicyConfig p;
    SondeSwitchVerdict v = verdict(AF_INET6, 30.0, 0.999);
    CHECK(sonde_switch_policy_init(NULL) == -EINVAL && ERROR_SAYS("cfg is NULL"),
          "policy_init(NULL) is -EINVAL");
    CHECK(sonde_switch_policy_init(&p) == 0, "policy_init");
    CHECK(p.size == sizeof p && p.confirm == 1 && p.margin_pct == 10.0 &&
              p.min_confidence == 0.95 && p.hold_ms == 30000,
          "the defaults: 1 verdict, 10 %, 0.95, 30 s");
    CHECK(sonde_switch_set_policy(NULL, &p) == -EINVAL && ERROR_SAYS("connection is NULL"),
          "set_policy(NULL, ...) is -EINVAL");
    CHECK(sonde_switch_verdict(NULL, &v, NULL) == -EINVAL && ERROR_SAYS("connection is NULL"),
          "verdict(NULL, ...) is -EINVAL");
    return 0;
}

/* What a policy on `c` refuses before any switch: NULL, thresholds and verdicts out of
 * range, a verdict before a policy. */
static int refusals(SondeSwitchConn *c) {
    SondeSwitchPolicyConfig p;
    SondeSwitchDecision d;
    CHECK(decide(c, AF_INET6, 30.0, 0.999, &d) == -EINVAL && ERROR_SAYS("no policy"),
          "a verdict before a policy is -EINVAL");
    CHECK(sonde_switch_set_policy(c, NULL) == -EINVAL && ERROR_SAYS("cfg is NULL"),
          "set_policy(c, NULL) is -EINVAL");
    sonde_switch_policy_init(&p);
    p.confirm = 0;
    CHECK(sonde_switch_set_policy(c, &p) == -EINVAL && ERROR_SAYS("confirm is 0"),
          "confirm 0 is refused");
    sonde_switch_policy_init(&p);
    p.margin_pct = NAN;
    CHECK(sonde_switch_set_policy(c, &p) == -EINVAL && ERROR_SAYS("margin_pct"),
          "a margin that is not a number is refused");
    sonde_switch_policy_init(&p);
    p.min_confidence = 1.5;
    CHECK(sonde_switch_set_policy(c, &p) == -EINVAL && ERROR_SAYS("min_confidence"),
          "a confidence above 1 is refused");
    sonde_switch_policy_init(&p);
    CHECK(sonde_switch_set_policy(c, &p) == 0, "set_policy");
    CHECK(decide(c, 77, 30.0, 0.999, &d) == -EINVAL && ERROR_SAYS("better 77"),
          "a family that is not one is refused");
    CHECK(decide(c, AF_INET6, 30.0, 2.0, &d) == -EINVAL && ERROR_SAYS("confidence 2"),
          "a confidence above 1 is refused");
    CHECK(sonde_switch_verdict(c, NULL, &d) == -EINVAL && ERROR_SAYS("verdict is NULL"),
          "verdict(c, NULL) is -EINVAL");
    CHECK(family_of(c) == AF_INET, "nothing refused moved the stream");
    return 0;
}

/* The policy drives the switches: confirm 2 and a 60 s hold, then a fresh policy. */
static int driven(SondeSwitchConn *c, SondeSwitchConn *s) {
    SondeSwitchPolicyConfig p;
    SondeSwitchDecision d;
    sonde_switch_policy_init(&p);
    p.confirm = 2;
    p.hold_ms = 60000;
    CHECK(sonde_switch_set_policy(c, &p) == 0, "set_policy confirm 2");
    CHECK(sonde_switch_send(c, "one|", 4, 0) == 4, "send before");

    CHECK(decide(c, AF_INET6, 30.0, 0.999, &d) == 0 && d.switched_to == 0 &&
              strstr(d.reason, "(1/2 verdicts in a row)") != NULL,
          "the first verdict for IPv6 waits for a second");
    CHECK(family_of(c) == AF_INET, "still IPv4 after one verdict");
    CHECK(decide(c, AF_INET6, 30.0, 0.999, &d) == AF_INET6 && d.switched_to == AF_INET6,
          "the second verdict in a row moves the stream to IPv6");
    CHECK(strstr(d.reason, "IPv6 is better by 30.0 % on median latency (confidence 0.999)") !=
              NULL,
          "the reason names the family, the margin and the measure");
    CHECK(family_of(c) == AF_INET6, "the stream is sent on IPv6 now");
    CHECK(sonde_switch_send(c, "two|", 4, 0) == 4, "send after the switch");

    CHECK(decide(c, AF_INET, 50.0, 0.999, &d) == 0, "IPv4 better: one verdict");
    CHECK(decide(c, AF_INET, 50.0, 0.999, &d) == 0 && strstr(d.reason, "hold") != NULL,
          "IPv4 better twice, but within the hold: stays");
    CHECK(decide(c, AF_INET, 5.0, 0.999, &d) == 0 && strstr(d.reason, "under the") != NULL,
          "a margin under the policy's: stays");
    CHECK(decide(c, 0, 0.0, -1.0, &d) == 0 && strstr(d.reason, "no family is better") != NULL,
          "neither better: stays");
    CHECK(family_of(c) == AF_INET6, "nothing moved the stream");

    sonde_switch_policy_init(&p);
    p.hold_ms = 0;
    CHECK(sonde_switch_set_policy(c, &p) == 0, "a new policy, no hold");
    CHECK(decide(c, AF_INET, 20.0, -1.0, &d) == AF_INET &&
              strstr(d.reason, "disjoint ranges") != NULL,
          "a verdict without a p-value moves the stream back to IPv4");
    CHECK(family_of(c) == AF_INET, "the stream is sent on IPv4 again");

    /* The accepting end cannot switch: its policy says move, the move is refused. */
    CHECK(sonde_switch_set_policy(s, &p) == 0, "set_policy on the accepting end");
    int other = family_of(s) == AF_INET ? AF_INET6 : AF_INET;
    CHECK(decide(s, other, 50.0, 0.999, &d) == -EPERM && d.switched_to == 0,
          "the accepting end's policy cannot move the stream");
    return 0;
}

static void *close_in_thread(void *c) {
    return (void *)(intptr_t)sonde_switch_close((SondeSwitchConn *)c);
}

int main(void) {
    SondeSwitchListener *l;
    SondeSwitchConn *c, *s;
    char addrs[256];
    if (bad_arguments() != 0) return 1;
    CHECK(sonde_switch_listen("127.0.0.1:0,[::1]:0", NULL, &l) == 0, "listen");
    CHECK(sonde_switch_listener_addrs(l, addrs, sizeof addrs) > 0, "listener_addrs");
    CHECK(sonde_switch_connect(addrs, AF_INET, NULL, &c) == 0, "connect over IPv4");
    CHECK(sonde_switch_accept(l, 5000, &s) == 0, "accept");
    if (refusals(c) != 0 || driven(c, s) != 0) return 1;

    CHECK(sonde_switch_send(c, "three", 5, 0) == 5 && sonde_switch_finish(c) == 0, "finish");
    char got[64];
    size_t n = 0;
    for (;;) {
        ssize_t r = sonde_switch_recv(s, got + n, sizeof got - 1 - n, 0);
        CHECK(r >= 0, "recv");
        if (r == 0) break;
        n += (size_t)r;
    }
    got[n] = 0;
    CHECK(strcmp(got, "one|two|three") == 0, "every byte once and in order");
    SondeSwitchStats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    CHECK(sonde_switch_stats(s, &st) == 0 && st.switches == 2 && st.duplicates == 0,
          "the receiving end saw the two switches");

    pthread_t t;
    void *rc;
    CHECK(pthread_create(&t, NULL, close_in_thread, s) == 0, "a thread to close the server");
    CHECK(sonde_switch_close(c) == 0, "close the client");
    pthread_join(t, &rc);
    CHECK((intptr_t)rc == 0, "close the server");
    sonde_switch_listener_close(l);
    printf("policy: ok, %llu switches driven by verdicts\n", (unsigned long long)st.switches);
    return 0;
}
