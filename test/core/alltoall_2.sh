#!/bin/sh
# 2 ranks, 60 messages each way
exec ./test_sctpt_alltoall 2 60
