/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cxxops.h - the one list of the C++ operator new/delete variants heaptap interposes (every
 * variant of the Itanium C++ ABI on LP64: new, new[], nothrow, align_val_t; delete/delete[]
 * plain, nothrow, sized, aligned), by index and mangled name. real.c looks each up, interpose_cxx.c
 * defines each, lib/heaptap.map exports the families by pattern, and
 * tests/static/inproc_symbols.sh reads the names from this file. Data only.
 */
#ifndef HEAPTAP_LIB_CXXOPS_H
#define HEAPTAP_LIB_CXXOPS_H

/* X(index, mangled name) for each variant; the news first, the deletes after. */
#define CXX_OPERATORS(X)                                               \
	X(RCXX_NEW, _Znwm)                                             \
	X(RCXX_NEW_ARR, _Znam)                                         \
	X(RCXX_NEW_NT, _ZnwmRKSt9nothrow_t)                            \
	X(RCXX_NEW_ARR_NT, _ZnamRKSt9nothrow_t)                        \
	X(RCXX_NEW_AL, _ZnwmSt11align_val_t)                           \
	X(RCXX_NEW_ARR_AL, _ZnamSt11align_val_t)                       \
	X(RCXX_NEW_AL_NT, _ZnwmSt11align_val_tRKSt9nothrow_t)          \
	X(RCXX_NEW_ARR_AL_NT, _ZnamSt11align_val_tRKSt9nothrow_t)      \
	X(RCXX_DEL, _ZdlPv)                                            \
	X(RCXX_DEL_ARR, _ZdaPv)                                        \
	X(RCXX_DEL_NT, _ZdlPvRKSt9nothrow_t)                           \
	X(RCXX_DEL_ARR_NT, _ZdaPvRKSt9nothrow_t)                       \
	X(RCXX_DEL_SZ, _ZdlPvm)                                        \
	X(RCXX_DEL_ARR_SZ, _ZdaPvm)                                    \
	X(RCXX_DEL_AL, _ZdlPvSt11align_val_t)                          \
	X(RCXX_DEL_ARR_AL, _ZdaPvSt11align_val_t)                      \
	X(RCXX_DEL_AL_NT, _ZdlPvSt11align_val_tRKSt9nothrow_t)         \
	X(RCXX_DEL_ARR_AL_NT, _ZdaPvSt11align_val_tRKSt9nothrow_t)     \
	X(RCXX_DEL_SZ_AL, _ZdlPvmSt11align_val_t)                      \
	X(RCXX_DEL_ARR_SZ_AL, _ZdaPvmSt11align_val_t)

#define CXXOPS_ENUM_(id, name) id,
enum real_cxx { CXX_OPERATORS(CXXOPS_ENUM_) RCXX_COUNT };
#undef CXXOPS_ENUM_

#endif
