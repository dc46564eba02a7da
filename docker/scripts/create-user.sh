#!/bin/sh
# Create the unprivileged user the runtime and serving images run as.
#
# Usage: create-user.sh NAME UID
#
# The user joins the video and render groups, which own /dev/kfd and
# /dev/dri inside the container. Hosts number `render` differently, so
# `docker run --group-add $(getent group render | cut -d: -f3)` may still be
# needed; docs/images.md says so.
set -eu

[ "$#" -eq 2 ] || { echo "usage: create-user.sh NAME UID" >&2; exit 2; }
name=$1
uid=$2

if id "$name" >/dev/null 2>&1; then
    # The Dockerfiles say USER <uid>: an existing user must have that uid.
    [ "$(id -u "$name")" = "$uid" ] || { echo "create-user: $name exists with uid $(id -u "$name"), not $uid" >&2; exit 1; }
    echo "create-user: $name exists"
elif getent passwd "$uid" >/dev/null; then
    echo "create-user: uid $uid is taken by $(getent passwd "$uid" | cut -d: -f1)" >&2
    exit 1
else
    groupadd --gid "$uid" "$name"
    useradd --uid "$uid" --gid "$uid" --create-home --shell /bin/bash "$name"
fi
for group in video render; do
    if getent group "$group" >/dev/null; then
        usermod --append --groups "$group" "$name"
    fi
done
id "$name"
