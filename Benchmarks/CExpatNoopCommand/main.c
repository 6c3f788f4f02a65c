// feedingest-cnoop FILE: the whole-process floor of this stack. A C program that reads FILE in 64 KiB chunks into
// libexpat (namespaces on, as feedingest parses) with no-op handlers and exits: what `feedingest parse FILE` is
// compared with in the benchmark's `process` section (start-up, reading and parsing included, nothing written).
#include "CExpatNoop.h"
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: feedingest-cnoop FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    long elements = cexpat_noop_parse_fd(fd, 64 * 1024, 1);
    close(fd);
    if (elements < 0) {
        fprintf(stderr, "feedingest-cnoop: %s is not well-formed XML\n", argv[1]);
        return 1;
    }
    printf("%ld\n", elements);
    return 0;
}
