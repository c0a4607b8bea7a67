/* nvm_run_switch.c - the same interpreter loop as nvm_run.c, with switch dispatch. */
#define NVM_RUN_SWITCH 1
#include "nvm_run.c"
