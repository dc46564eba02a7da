#!/bin/sh
#
# Stand-in UCX (rehearsal): regenerate the build system, as UCX's autogen.sh
# does (autoreconf with the m4 macros of config/m4).
#

rm -rf autom4te.cache
mkdir -p config/m4 config/aux

autoreconf -v --install || exit 1
rm -rf autom4te.cache
