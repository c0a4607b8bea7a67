#!/bin/sh
# 8 ranks, 12 messages per ordered pair
exec ./test_sctpt_alltoall 8 12
