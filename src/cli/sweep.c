#include "cli/cli.h"
int cmd_sweep(int argc, char **argv) { (void)argc; (void)argv; return 2; }
