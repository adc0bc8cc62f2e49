/* SPDX-License-Identifier: GPL-2.0-only */
/* sys.h: system calls that touch nothing of libc's, for the code that runs
 * in memory it shares with bee-load: the session's init, and a tool before
 * its exec (launch.c; the mount namespace of mountns.c; the late Landlock
 * rules of ll.c; the overlays of vfs.c).
 *
 * On x86-64 init is cloned with CLONE_VM (launch.c): it runs in bee-load's
 * address space, on a stack of its own, while bee-load goes on. glibc's
 * wrappers are not for it there:
 *
 *   errno                  each failing wrapper writes it into the
 *                          thread-local storage of the thread that cloned
 *                          init, which bee-load reads after its own calls
 *   cancellation points    read, write, close, poll, recvmsg and the rest
 *                          switch that thread's cancellation state while
 *                          bee-load has other threads (the DNS stub's)
 *   setgroups, setres[ug]id
 *                          signal every thread of bee-load's, to make them
 *                          change their credentials too
 *   malloc, stdio          bee-load's heap and locks
 *
 * So the code below runs on bee_sys, which returns a call's result or
 * -errno, with nothing but registers between it and the kernel, and on the
 * string functions that only read and write the memory they are given
 * (memcpy, memset, strlen, strcmp). Elsewhere bee_sys is libc's syscall()
 * (BEE_SYS_SHARED_VM 0): init is then cloned with a copy of the memory, as
 * fork makes, and errno is its own. -DBEE_SYS_FORK builds that path on
 * x86-64 too, and so do the sanitizers (below).
 */
#ifndef BEE_SYS_H
#define BEE_SYS_H

#include <errno.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The sanitizers keep their state per thread (ASan's stack bounds and
 * fake stacks, TSan's clocks): init in the cloning thread's memory would
 * write that thread's, so sanitized builds take the fork path. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BEE_SYS_FORK 1
#endif

#if defined(__x86_64__) && !defined(BEE_SYS_FORK)

#define BEE_SYS_SHARED_VM 1

static inline long bee_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* A clone onto a stack of the caller's: the kernel's clone (a = flags,
 * b = the stack's top) or clone3 (a = the clone_args, b = their size).
 * The child calls fn(arg) there and leaves with what it returns
 * (exit_group: without CLONE_THREAD the child is a process of its own);
 * the parent gets the child's pid or -errno. The stack's top is 16-byte
 * aligned, as the call wants. */
static inline long bee_clone_run(long nr, long a, long b, int (*fn)(void *), void *arg)
{
	register long r10 __asm__("r10") = 0;   /* clone: the child's tid */
	register long r8 __asm__("r8") = 0;     /* clone: the tls */
	register long r12 __asm__("r12") = (long)fn;
	register long r13 __asm__("r13") = (long)arg;
	long ret;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r13, %%rdi\n\t"
			 "call *%%r12\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "ud2\n"
			 "1:"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(0L), "r"(r10), "r"(r8), "r"(r12), "r"(r13),
			   [exit] "i"(SYS_exit_group)
			 : "rcx", "r11", "memory");
	return ret;
}

#else

#define BEE_SYS_SHARED_VM 0

static inline long bee_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(n, a, b, c, d, e, f);
	return r < 0 ? -errno : r;
}

#endif

/* bee_sys(SYS_x, args...): up to six arguments, the missing ones 0 */
#define BEE_SYS_(n, a, b, c, d, e, f, ...) \
	bee_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define bee_sys(...) BEE_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/* closes fd, keeping the caller's error */
static inline void bee_sys_close(int fd)
{
	if (fd >= 0)
		bee_sys(SYS_close, fd);
}

#endif
