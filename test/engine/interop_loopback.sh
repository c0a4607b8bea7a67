#!/bin/sh
# The native engine and usrsctp talk to each other on loopback, each direction, with the
# interface's MTU and with an Ethernet one and CRC32c on: every message of every size class
# (1 B to 4 MiB) arrives intact and in order both ways.
set -e
./test_sctpe_xfer native usrsctp 120
./test_sctpe_xfer usrsctp native 120
./test_sctpe_xfer native usrsctp 80 1472 crc
./test_sctpe_xfer usrsctp native 80 1472 crc
./test_sctpe_xfer native native 80 1472 crc
