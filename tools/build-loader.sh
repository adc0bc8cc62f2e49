#!/bin/sh
# Interim build of bee-load until GNUmakefile knows loader/ (see the report).
set -eu
cd "$(dirname "$0")/.."
make -s build/libbeec.a build/beec
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes"
CPPFLAGS="-I. -Icompiler -Iruntime -Ibuild/grammar -Iloader -D_GNU_SOURCE"
LIBS="-lbpf -lelf -lz -ljansson -lxxhash -lm"
mkdir -p build/loader/fault build/loader/tests
objs="" fobjs=""
for c in loader/*.c; do
	n=$(basename "$c" .c)
	[ "$n" = bee-load ] && continue
	gcc $CPPFLAGS $CFLAGS -c -o "build/loader/$n.o" "$c"
	gcc $CPPFLAGS $CFLAGS -DBEE_FAULT_INJECTION -c -o "build/loader/fault/$n.o" "$c"
	objs="$objs build/loader/$n.o"
	fobjs="$fobjs build/loader/fault/$n.o"
done
rm -f build/libbee.a build/libbee-fault.a
ar rcs build/libbee.a $objs
ar rcs build/libbee-fault.a $fobjs
gcc $CPPFLAGS $CFLAGS -c -o build/loader/bee-load.o loader/bee-load.c
gcc $CFLAGS -o build/bee-load build/loader/bee-load.o build/libbee.a build/libbeec.a $LIBS
gcc $CFLAGS -o build/bee-load-fault build/loader/bee-load.o build/libbee-fault.a build/libbeec.a $LIBS
for t in loader/tests/test_*.c; do
	[ -f "$t" ] || continue
	n=$(basename "$t" .c)
	gcc $CPPFLAGS $CFLAGS -c -o "build/loader/tests/$n.o" "$t"
	gcc $CFLAGS -o "build/loader/tests/$n" "build/loader/tests/$n.o" build/libbee.a build/libbeec.a \
		-lcmocka $LIBS
done
if [ -f loader/tests/probe/bee-probe.c ]; then
	gcc $CPPFLAGS $CFLAGS -o build/loader/tests/bee-probe loader/tests/probe/bee-probe.c
fi
