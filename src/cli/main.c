/*
 * main.c -- the rbf executable: everything is in rbf_cli_main (cli_main.c),
 * which the fuzz harness calls too.
 */
#include "cli.h"

int main(int argc, char **argv) { return rbf_cli_main(argc, argv); }
