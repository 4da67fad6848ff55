/*
 * fuzz_config.c — a libFuzzer harness for slaqd's configuration file
 * (src/daemon/config.c) and the settings it applies: each input is the
 * file's bytes, read by slaqd's own main() (renamed slaqd_main in fuzz
 * builds) from `--config /proc/self/fd/N` (a memfd holding the input),
 * every key matched against slaqd's options and every value applied by
 * the same code as the option's. A positional argument then ends the
 * command line with "unexpected argument": main returns before it takes
 * the state directory or starts anything.
 *
 * main's settings live in a static: a few carry over between inputs (a
 * list such as --allow-uid's fills up to its cap), as they would across
 * several --config files read by one process.
 *
 * Built with slaqd's sources by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seeds in tests/fuzz/corpus/config.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int slaqd_main(int argc, char **argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (size > 64 * 1024)
        return 0;
    if (fd < 0) {
        fd = memfd_create("slaqd.conf", MFD_CLOEXEC);
        if (fd < 0) {
            perror("fuzz_config: memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    char a0[] = "slaqd", a1[] = "--config", a3[] = "stop-here";
    char *argv[] = {a0, a1, path, a3, NULL};
    optind = 0; /* getopt starts over (glibc), as in a fresh process */
    if (slaqd_main(4, argv) != 2)
        abort(); /* it must stop at the argument, if not before */
    return 0;
}
