// rabbitmq-load: the RabbitMQ side of bench/compare.sh. Does the same job as ciphermq-bench over
// AMQP 0-9-1 with librabbitmq: mTLS with EXTERNAL auth, a durable classic queue of its own,
// persistent 1 KB bodies, publisher confirms with a window of W per publisher, one consumer with
// prefetch and a manual ack per delivery. Each body carries its send time, so the consumer
// measures end-to-end latency. Reports its own CPU use so a reader can see it is not the
// bottleneck. Plain C and one connection per thread: librabbitmq connections are not shared.
//
//   rabbitmq-load --port PORT --certs DIR [-p P] [-w W] [-s BYTES] [-d SECONDS] [--rate R]
//                 [--backlog N] [--prefetch N] [--json]
//
// --rate R publishes R msg/s in total, spread evenly over the publishers (latency runs).
// --backlog N publishes N messages with no consumer attached, then times the consumer draining
// them (drain_rate).
#define _GNU_SOURCE
#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static struct
{
    const char *host, *certs;
    int port, publishers, window, size, prefetch, json;
    double seconds, rate;
    long backlog;
} opt = {"127.0.0.1", NULL, 0, 1, 256, 1024, 256, 0, 10, 0, 0};

static char queue[64];
static atomic_long budget, confirmed, refused, delivered;
static atomic_int stop_publishing, stop_consuming, publishers_done;
static atomic_llong first_publish_us, last_confirm_us, last_delivery_us;

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "rabbitmq-load: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void check_reply(amqp_rpc_reply_t r, const char *what)
{
    if (r.reply_type == AMQP_RESPONSE_NORMAL)
        return;
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION)
        die(what, amqp_error_string2(r.library_error));
    die(what, "broker refused (server exception)");
}

// Latency samples in microseconds; sorted once at the end.
typedef struct
{
    int64_t *v;
    size_t n, cap;
} samples_t;

static void samples_add(samples_t *s, int64_t x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 65536;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v)
            die("out of memory", NULL);
    }
    s->v[s->n++] = x;
}

static int cmp64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_ms(samples_t *s, double p)
{
    if (s->n == 0)
        return 0;
    size_t rank = (size_t)(p / 100.0 * (double)s->n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > s->n)
        rank = s->n;
    return (double)s->v[rank - 1] / 1000.0;
}

static amqp_connection_state_t open_connection(const char *identity)
{
    char cert[4096], key[4096], ca[4096];
    snprintf(cert, sizeof cert, "%s/%s.crt", opt.certs, identity);
    snprintf(key, sizeof key, "%s/%s.key", opt.certs, identity);
    snprintf(ca, sizeof ca, "%s/ca.crt", opt.certs);
    amqp_connection_state_t c = amqp_new_connection();
    amqp_socket_t *s = amqp_ssl_socket_new(c);
    if (!s)
        die("cannot create a TLS socket", NULL);
    amqp_ssl_socket_set_verify_peer(s, 1);
    amqp_ssl_socket_set_verify_hostname(s, 1);
    if (amqp_ssl_socket_set_ssl_versions(s, AMQP_TLSv1_2, AMQP_TLSvLATEST) != AMQP_STATUS_OK ||
        amqp_ssl_socket_set_cacert(s, ca) != AMQP_STATUS_OK ||
        amqp_ssl_socket_set_key(s, cert, key) != AMQP_STATUS_OK)
        die("cannot load certificates from", opt.certs);
    const int status = amqp_socket_open(s, opt.host, opt.port);
    if (status != AMQP_STATUS_OK)
        die("cannot connect", amqp_error_string2(status));
    check_reply(amqp_login(c, "/", 0, 131072, 0, AMQP_SASL_METHOD_EXTERNAL, identity), "login");
    amqp_channel_open(c, 1);
    check_reply(amqp_get_rpc_reply(c), "channel.open");
    return c;
}

static void close_connection(amqp_connection_state_t c)
{
    amqp_channel_close(c, 1, AMQP_REPLY_SUCCESS);
    amqp_connection_close(c, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(c);
}

typedef struct
{
    amqp_connection_state_t conn;
    int index;
    samples_t confirm;
} publisher_t;

static int take_budget(void)
{
    if (atomic_load_explicit(&stop_publishing, memory_order_relaxed))
        return 0;
    return opt.backlog == 0 || atomic_fetch_sub(&budget, 1) > 0;
}

static void *publish_loop(void *arg)
{
    publisher_t *p = arg;
    const size_t ring = 1u << 20; // >= any window
    int64_t *sent_at = calloc(ring, sizeof *sent_at);
    unsigned char *acked = calloc(ring, 1);
    char *body = malloc((size_t)opt.size);
    if (!sent_at || !acked || !body)
        die("out of memory", NULL);
    for (int i = 0; i < opt.size; ++i)
        body[i] = (char)(rand() & 0xff); // stands in for ciphertext
    amqp_basic_properties_t props = {._flags = AMQP_BASIC_DELIVERY_MODE_FLAG, .delivery_mode = 2};
    const amqp_bytes_t body_bytes = {(size_t)opt.size, body};
    // Delivery tags of a confirm-mode channel count publishes from 1.
    uint64_t next_tag = 1, lowest_unacked = 1, outstanding = 0;
    const double period_us = opt.rate > 0 ? 1e6 * opt.publishers / opt.rate : 0;
    const int64_t start = now_us() + (int64_t)(p->index * (opt.rate > 0 ? 1e6 / opt.rate : 0));
    uint64_t scheduled = 0;
    int more = 1;
    while (more || outstanding > 0) {
        const int64_t now = now_us();
        const int due = period_us == 0 || now >= start + (int64_t)(scheduled * period_us);
        if (more && outstanding < (uint64_t)opt.window && due) {
            if (!take_budget()) {
                more = 0;
                continue;
            }
            int64_t expected = 0;
            atomic_compare_exchange_strong(&first_publish_us, &expected, now);
            if (opt.size >= 8)
                memcpy(body, &now, sizeof now);
            if (amqp_basic_publish(p->conn, 1, amqp_empty_bytes, amqp_cstring_bytes(queue), 0, 0,
                                   &props, body_bytes) != AMQP_STATUS_OK)
                die("publish failed", NULL);
            sent_at[next_tag % ring] = now;
            ++next_tag;
            ++outstanding;
            ++scheduled;
            continue;
        }
        // Wait for confirms, but not past the next scheduled publish (nor long, to see a stop).
        int64_t wait = 200000;
        if (more && period_us > 0 && outstanding < (uint64_t)opt.window) {
            wait = start + (int64_t)(scheduled * period_us) - now;
            if (wait < 0)
                wait = 0;
        }
        struct timeval tv = {wait / 1000000, wait % 1000000};
        if (period_us > 0) {
            // Fixed rate: wait in poll() with a nanosecond deadline ourselves. librabbitmq's own
            // timeout spins through the last partial millisecond, a busy loop at 1,000 msg/s.
            if (!amqp_frames_enqueued(p->conn) && !amqp_data_in_buffer(p->conn)) {
                struct pollfd fd = {amqp_get_sockfd(p->conn), POLLIN, 0};
                const struct timespec ts = {wait / 1000000, (long)(wait % 1000000) * 1000};
                if (ppoll(&fd, 1, &ts, NULL) == 0)
                    continue;
            }
            tv = (struct timeval){0, 0};
        }
        amqp_frame_t frame;
        const int status = amqp_simple_wait_frame_noblock(p->conn, &frame, &tv);
        if (status == AMQP_STATUS_TIMEOUT)
            continue;
        if (status != AMQP_STATUS_OK)
            die("waiting for confirms", amqp_error_string2(status));
        if (frame.frame_type != AMQP_FRAME_METHOD)
            continue;
        uint64_t tag = 0;
        int multiple = 0, nack = 0;
        if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
            const amqp_basic_ack_t *a = frame.payload.method.decoded;
            tag = a->delivery_tag;
            multiple = a->multiple;
        } else if (frame.payload.method.id == AMQP_BASIC_NACK_METHOD) {
            const amqp_basic_nack_t *n = frame.payload.method.decoded;
            tag = n->delivery_tag;
            multiple = n->multiple;
            nack = 1;
        } else {
            continue;
        }
        const int64_t at = now_us();
        for (uint64_t t = multiple ? lowest_unacked : tag; t <= tag; ++t) {
            if (acked[t % ring])
                continue;
            acked[t % ring] = 1;
            --outstanding;
            if (nack) {
                atomic_fetch_add(&refused, 1);
            } else {
                samples_add(&p->confirm, at - sent_at[t % ring]);
                atomic_fetch_add(&confirmed, 1);
            }
        }
        while (lowest_unacked < next_tag && acked[lowest_unacked % ring])
            acked[lowest_unacked++ % ring] = 0;
        atomic_store(&last_confirm_us, at);
    }
    free(sent_at);
    free(acked);
    free(body);
    atomic_fetch_add(&publishers_done, 1);
    return NULL;
}

typedef struct
{
    amqp_connection_state_t conn;
    samples_t e2e;
    atomic_int subscribed;
    atomic_llong started_us;
} consumer_t;

static void *consume_loop(void *arg)
{
    consumer_t *c = arg;
    amqp_basic_qos(c->conn, 1, 0, (uint16_t)opt.prefetch, 0);
    check_reply(amqp_get_rpc_reply(c->conn), "basic.qos");
    amqp_basic_consume(c->conn, 1, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    check_reply(amqp_get_rpc_reply(c->conn), "basic.consume");
    atomic_store(&c->started_us, now_us());
    atomic_store(&c->subscribed, 1);
    while (!atomic_load(&stop_consuming)) {
        struct timeval tv = {0, 200000};
        amqp_envelope_t env;
        amqp_maybe_release_buffers(c->conn);
        const amqp_rpc_reply_t r = amqp_consume_message(c->conn, &env, &tv, 0);
        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            r.library_error == AMQP_STATUS_TIMEOUT)
            continue;
        check_reply(r, "consume");
        const int64_t now = now_us();
        if (env.message.body.len >= 8) {
            int64_t sent;
            memcpy(&sent, env.message.body.bytes, sizeof sent);
            samples_add(&c->e2e, now - sent);
        }
        if (amqp_basic_ack(c->conn, 1, env.delivery_tag, 0) != AMQP_STATUS_OK)
            die("ack failed", NULL);
        amqp_destroy_envelope(&env);
        atomic_store(&last_delivery_us, now);
        atomic_fetch_add(&delivered, 1);
    }
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            opt.json = 1;
            continue;
        }
        if (!v)
            die("missing value for", a);
        ++i;
        if (!strcmp(a, "--host"))
            opt.host = v;
        else if (!strcmp(a, "--port"))
            opt.port = atoi(v);
        else if (!strcmp(a, "--certs"))
            opt.certs = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--publishers"))
            opt.publishers = atoi(v);
        else if (!strcmp(a, "-w") || !strcmp(a, "--window"))
            opt.window = atoi(v);
        else if (!strcmp(a, "-s") || !strcmp(a, "--size"))
            opt.size = atoi(v);
        else if (!strcmp(a, "-d") || !strcmp(a, "--duration"))
            opt.seconds = atof(v);
        else if (!strcmp(a, "--rate"))
            opt.rate = atof(v);
        else if (!strcmp(a, "--backlog"))
            opt.backlog = atol(v);
        else if (!strcmp(a, "--prefetch"))
            opt.prefetch = atoi(v);
        else
            die("unknown option (see the comment at the top of rabbitmq-load.c)", a);
    }
    if (!opt.certs || opt.port <= 0 || opt.publishers < 1 || opt.window < 1 ||
        opt.window > (1 << 19) || opt.size < 1 || opt.prefetch < 1 || opt.prefetch > 65535)
        die("bad options", "need --port and --certs; see the top of rabbitmq-load.c");
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

// Waits until the consumer has everything confirmed, or nothing arrived for 30 s.
static void wait_drained(void)
{
    while (atomic_load(&delivered) < atomic_load(&confirmed) &&
           now_us() - atomic_load(&last_delivery_us) < 30000000)
        sleep_ms(5);
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    snprintf(queue, sizeof queue, "cmq_compare_%d_%lld", (int)getpid(), (long long)now_us());
    amqp_connection_state_t setup = open_connection("receiver_1");
    amqp_table_entry_t type = {
        amqp_cstring_bytes("x-queue-type"),
        {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("classic")}};
    const amqp_table_t args = {1, &type};
    amqp_queue_declare(setup, 1, amqp_cstring_bytes(queue), 0, 1, 0, 0, args);
    check_reply(amqp_get_rpc_reply(setup), "queue.declare");

    consumer_t consumer = {.conn = open_connection("receiver_1")};
    publisher_t *pubs = calloc((size_t)opt.publishers, sizeof *pubs);
    for (int i = 0; i < opt.publishers; ++i) {
        pubs[i].conn = open_connection("sender_1");
        pubs[i].index = i;
        amqp_confirm_select(pubs[i].conn, 1);
        check_reply(amqp_get_rpc_reply(pubs[i].conn), "confirm.select");
    }
    atomic_store(&budget, opt.backlog);

    const double cpu0 = cpu_seconds();
    const int64_t t0 = now_us();
    pthread_t consumer_thread, *pub_threads = calloc((size_t)opt.publishers, sizeof *pub_threads);
    if (opt.backlog == 0) {
        pthread_create(&consumer_thread, NULL, consume_loop, &consumer);
        while (!atomic_load(&consumer.subscribed))
            sleep_ms(1);
    }
    for (int i = 0; i < opt.publishers; ++i)
        pthread_create(&pub_threads[i], NULL, publish_loop, &pubs[i]);
    const int64_t started = now_us();
    while (atomic_load(&publishers_done) < opt.publishers) {
        if (opt.backlog == 0 && now_us() - started >= (int64_t)(opt.seconds * 1e6))
            atomic_store(&stop_publishing, 1);
        sleep_ms(5);
    }
    for (int i = 0; i < opt.publishers; ++i)
        pthread_join(pub_threads[i], NULL);
    if (opt.backlog > 0) {
        atomic_store(&last_delivery_us, now_us());
        pthread_create(&consumer_thread, NULL, consume_loop, &consumer);
    }
    atomic_store(&last_delivery_us, now_us());
    wait_drained();
    atomic_store(&stop_consuming, 1);
    pthread_join(consumer_thread, NULL);
    const double cpu = cpu_seconds() - cpu0;
    const double wall = (double)(now_us() - t0) / 1e6;

    samples_t confirm = {0};
    for (int i = 0; i < opt.publishers; ++i) {
        for (size_t k = 0; k < pubs[i].confirm.n; ++k)
            samples_add(&confirm, pubs[i].confirm.v[k]);
        close_connection(pubs[i].conn);
    }
    close_connection(consumer.conn);
    amqp_queue_delete(setup, 1, amqp_cstring_bytes(queue), 0, 0);
    close_connection(setup);
    qsort(confirm.v, confirm.n, sizeof *confirm.v, cmp64);
    qsort(consumer.e2e.v, consumer.e2e.n, sizeof *consumer.e2e.v, cmp64);

    const long n_conf = atomic_load(&confirmed), n_del = atomic_load(&delivered);
    const double pub_sec =
        (double)(atomic_load(&last_confirm_us) - atomic_load(&first_publish_us)) / 1e6;
    const double del_sec =
        (double)(atomic_load(&last_delivery_us) - atomic_load(&first_publish_us)) / 1e6;
    const double drain_sec =
        (double)(atomic_load(&last_delivery_us) - atomic_load(&consumer.started_us)) / 1e6;
    const double publish_rate = pub_sec > 0 ? (double)n_conf / pub_sec : 0;
    const double deliver_rate = del_sec > 0 ? (double)n_del / del_sec : 0;
    const double drain_rate = opt.backlog > 0 && drain_sec > 0 ? (double)n_del / drain_sec : 0;
    const long messages = n_conf > n_del ? n_conf : n_del;
    const double cpu_pct = wall > 0 ? 100.0 * cpu / wall : 0;
    const double cpu_us = messages > 0 ? cpu * 1e6 / (double)messages : 0;
    if (opt.json) {
        printf("{\"publishers\":%d,\"window\":%d,\"size\":%d,\"prefetch\":%d,\"confirmed\":%ld,"
               "\"refused\":%ld,\"delivered\":%ld,\"publish_rate\":%.0f,\"deliver_rate\":%.0f,"
               "\"drain_rate\":%.0f,\"confirm_p50_ms\":%.3f,\"confirm_p99_ms\":%.3f,"
               "\"e2e_p50_ms\":%.3f,\"e2e_p99_ms\":%.3f,\"e2e_p999_ms\":%.3f,"
               "\"client_cpu_pct\":%.1f,\"client_cpu_us_per_msg\":%.1f}\n",
               opt.publishers, opt.window, opt.size, opt.prefetch, n_conf, atomic_load(&refused),
               n_del, publish_rate, deliver_rate, drain_rate, percentile_ms(&confirm, 50),
               percentile_ms(&confirm, 99), percentile_ms(&consumer.e2e, 50),
               percentile_ms(&consumer.e2e, 99), percentile_ms(&consumer.e2e, 99.9), cpu_pct,
               cpu_us);
    } else {
        printf("publishers %d, %d-byte bodies, window %d, prefetch %d\n", opt.publishers, opt.size,
               opt.window, opt.prefetch);
        printf("confirmed %ld, refused %ld, delivered %ld\n", n_conf, atomic_load(&refused), n_del);
        printf("publish→confirm %9.0f msg/s   p50 %.2f ms   p99 %.2f ms\n", publish_rate,
               percentile_ms(&confirm, 50), percentile_ms(&confirm, 99));
        printf(
            "delivery        %9.0f msg/s   end-to-end p50 %.2f ms   p99 %.2f ms   p99.9 %.2f ms\n",
            deliver_rate, percentile_ms(&consumer.e2e, 50), percentile_ms(&consumer.e2e, 99),
            percentile_ms(&consumer.e2e, 99.9));
        if (opt.backlog > 0)
            printf("drain           %9.0f msg/s\n", drain_rate);
        printf("client CPU %.1f%% of one core, %.1f µs per message\n", cpu_pct, cpu_us);
    }
    const int complete = atomic_load(&refused) == 0 && n_del >= n_conf;
    return complete ? 0 : 1;
}
