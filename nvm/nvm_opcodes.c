/* nvm_opcodes.c - the opcode info table, expanded from NVM_OPCODES in nvm_opcodes.h. */
#include "nvm_opcodes.h"

const struct nvm_opinfo nvm_opinfo[NVM_OP__COUNT] = {
#define NVM_X_INFO(name, kind, pop, push, flow, doc) \
	[NVM_OP_##name] = { #name, NVM_OPND_##kind, NVM_OPND_SIZE_##kind, pop, push, \
			    NVM_FLOW_##flow, doc },
	NVM_OPCODES(NVM_X_INFO)
#undef NVM_X_INFO
};
