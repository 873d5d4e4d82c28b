// The first word of stdin chooses what this program does (sandbox fault tests);
// without a mode word it prints the sum of the integers on stdin. With
// arguments, it prints the files they name (as a testlib checker reads them).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) {
            FILE *f = fopen(argv[i], "r");
            for (int c; f && (c = fgetc(f)) != EOF;) putchar(c);
            if (f) fclose(f);
        }
        return 0;
    }
    char mode[64] = "", path[4096] = "";
    int port = 0;
    if (scanf("%63s", mode) != 1) mode[0] = '\0';
    if (strcmp(mode, "loop") == 0) {
        volatile unsigned long n = 0;
        for (;;) n = n + 1;
    }
    if (strcmp(mode, "fork") == 0) {
        for (;;) fork();
    }
    if (strcmp(mode, "hog") == 0) {
        for (;;) {
            char *block = malloc(16 << 20);
            if (block == NULL) {
                perror("malloc");  // "malloc: Cannot allocate memory": C's out-of-memory report
                return 1;
            }
            memset(block, 1, 16 << 20);
        }
    }
    if (strcmp(mode, "flood") == 0) {
        char line[1001];
        memset(line, 'x', 1000);
        line[1000] = '\0';
        for (;;) puts(line);
    }
    if (strcmp(mode, "escape") == 0) {
        if (scanf("%4095s %d", path, &port) != 2) return 2;
        FILE *secret = fopen(path, "r");
        printf("%s\n", secret ? "read" : "denied");
        FILE *escape = fopen("/escape", "w");
        printf("%s\n", escape && fputs("x", escape) >= 0 && fflush(escape) == 0 ? "wrote" : "refused");
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in address = {0};
        address.sin_family = AF_INET;
        address.sin_port = htons((unsigned short)port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int connected = connect(s, (struct sockaddr *)&address, sizeof address) == 0;
        printf("%s\n", connected ? "connected" : "unreachable");
        printf("%s\n", unshare(CLONE_NEWUSER) == 0 ? "userns" : "no userns");
        return 0;
    }
    long long sum = mode[0] ? atoll(mode) : 0, value;
    while (scanf("%lld", &value) == 1) sum += value;
    printf("%lld\n", sum);
    return 0;
}
