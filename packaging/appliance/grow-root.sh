#!/bin/sh
# Grows the root partition to the end of the card, then its ext4 file system, while it is mounted
# (growpart(1), resize2fs(8): ext4 grows online). Run once; a partition already at the end is not an error.
set -eu
device=$(findmnt -no SOURCE /)
disk=/dev/$(lsblk -no PKNAME "$device")
number=$(cat "/sys/class/block/$(basename "$device")/partition")
# growpart exits 1 when there is nothing to grow ("NOCHANGE"), 2 on a failure.
status=0
growpart "$disk" "$number" || status=$?
[ "$status" -le 1 ] || exit "$status"
resize2fs "$device"
