/* upload_sink.c — a tiny HTTP/1.1 server for bench/bodies.sh that reads request bodies and throws
 * them away, so an upload benchmark measures the client, not a server storing the body.
 *
 *   upload_sink [PORT]        (0 or nothing: a free port)
 *
 * Listens on 127.0.0.1, prints "PORT <n>" on stdout once it is listening, then serves one
 * connection at a time (the benchmark's clients run one after another), with keep-alive. Each
 * request's body, sized by Content-Length or sent chunked, is read to the end into one 256 KiB
 * buffer and discarded; "Expect: 100-continue" is answered. The response is 200 with a body that
 * is the number of body bytes received, in decimal, so that each client can check that the whole
 * body went through (a server that answered early would leave the upload unfinished).
 * Runs until killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)
#define HEAD_MAX (64 * 1024)

static char buf[BUF_SIZE];
static size_t have, at; /* buf[at..have) holds bytes read but not yet used */

/* Reads more bytes into buf (compacting it first). Returns the count, 0 at EOF, -1 on error. */
static ssize_t fill(int fd) {
    if (at > 0) {
        memmove(buf, buf + at, have - at);
        have -= at;
        at = 0;
    }
    if (have == BUF_SIZE) return -1;
    for (;;) {
        ssize_t n = recv(fd, buf + have, BUF_SIZE - have, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) have += (size_t)n;
        return n;
    }
}

/* One line (up to CRLF) from the buffer, NUL-terminated in place; NULL at EOF or error. */
static char *line(int fd) {
    for (;;) {
        char *start = buf + at;
        char *nl = memchr(start, '\n', have - at);
        if (nl) {
            *nl = '\0';
            if (nl > start && nl[-1] == '\r') nl[-1] = '\0';
            at = (size_t)(nl - buf) + 1;
            return start;
        }
        if (have - at >= HEAD_MAX) return NULL;
        if (fill(fd) <= 0) return NULL;
    }
}

/* Discards `n` body bytes. Returns 0, or -1 if the connection ends first. */
static int skip(int fd, unsigned long long n) {
    while (n > 0) {
        if (at == have) {
            at = have = 0;
            /* Large reads straight into the buffer: the common path for a big body. */
            ssize_t got;
            do got = recv(fd, buf, BUF_SIZE, 0); while (got < 0 && errno == EINTR);
            if (got <= 0) return -1;
            have = (size_t)got;
        }
        size_t take = have - at;
        if (take > n) take = (size_t)n;
        at += take;
        n -= take;
    }
    return 0;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Serves requests on one connection until it closes. */
static void serve(int fd) {
    have = at = 0;
    for (;;) {
        char *request_line = line(fd);
        if (!request_line) return;
        if (*request_line == '\0') continue; /* stray CRLF between requests */
        long long length = -1;
        int chunked = 0, expect = 0, close_after = 0;
        for (;;) {
            char *h = line(fd);
            if (!h) return;
            if (*h == '\0') break;
            char *colon = strchr(h, ':');
            if (!colon) continue;
            *colon = '\0';
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t') v++;
            if (strcasecmp(h, "Content-Length") == 0) length = atoll(v);
            else if (strcasecmp(h, "Transfer-Encoding") == 0 && strcasestr(v, "chunked")) chunked = 1;
            else if (strcasecmp(h, "Expect") == 0 && strcasecmp(v, "100-continue") == 0) expect = 1;
            else if (strcasecmp(h, "Connection") == 0 && strcasecmp(v, "close") == 0) close_after = 1;
        }
        if (expect) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            if (send_all(fd, cont, sizeof cont - 1) < 0) return;
        }
        unsigned long long received = 0;
        if (chunked) {
            for (;;) {
                char *size_line = line(fd);
                if (!size_line) return;
                unsigned long long n = strtoull(size_line, NULL, 16);
                if (n == 0) { /* trailers, then the blank line */
                    for (;;) {
                        char *t = line(fd);
                        if (!t) return;
                        if (*t == '\0') break;
                    }
                    break;
                }
                if (skip(fd, n) < 0) return;
                received += n;
                char *crlf = line(fd);
                if (!crlf) return;
            }
        } else if (length > 0) {
            if (skip(fd, (unsigned long long)length) < 0) return;
            received = (unsigned long long)length;
        }
        char body[32], head[160];
        int blen = snprintf(body, sizeof body, "%llu", received);
        int hlen = snprintf(head, sizeof head,
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n",
                            blen, close_after ? "Connection: close\r\n" : "");
        if (send_all(fd, head, (size_t)hlen) < 0 || send_all(fd, body, (size_t)blen) < 0) return;
        if (close_after) return;
    }
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 0;
    signal(SIGPIPE, SIG_IGN);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); return 1; }
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) { perror("bind"); return 1; }
    if (listen(s, 16) < 0) { perror("listen"); return 1; }
    socklen_t alen = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &alen);
    printf("PORT %d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR) continue;
            perror("accept");
            return 1;
        }
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(c);
        close(c);
    }
}
