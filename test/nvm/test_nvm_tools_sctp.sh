#!/bin/sh
# test_nvm_tools over the SCTP core: nvmctl manages a VM in nvmd, and two VMs play the
# paper's PING/PONG, every message an SCTP message (usrsctp over loopback UDP).
NVM_LINK=sctp exec "$(dirname "$0")/test_nvm_tools.sh"
