#!/bin/sh
# Graceful SHUTDOWN between the native engine and usrsctp, started by each side in turn, and
# between two native engines.
set -e
./test_sctpe_shutdown native usrsctp
./test_sctpe_shutdown usrsctp native
./test_sctpe_shutdown native native
