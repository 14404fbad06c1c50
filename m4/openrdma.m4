# SPDX-License-Identifier: GPL-2.0-only OR MIT

# OPENRDMA_SANITIZER([name], [-fsanitize value]): --enable-<name>
AC_DEFUN([OPENRDMA_SANITIZER], [
	AC_ARG_ENABLE([$1],
		[AS_HELP_STRING([--enable-$1], [build with -fsanitize=$2])],
		[], [enable_$1=no])
	AS_IF([test "x$enable_$1" = xyes],
	      [OPENRDMA_SAN_CFLAGS="$OPENRDMA_SAN_CFLAGS -fsanitize=$2"])
])

# OPENRDMA_TRANSPORT_SETUP([name], [default], [dependency check])
#
# --enable-<name>=auto|yes|no|dl.  The check, if given, runs for auto, yes
# and dl and must set openrdma_<name>_ok=yes or no and openrdma_<name>_why.
# auto: built-in when the check passes, else disabled (and the summary
# says why); yes or dl: the check must pass.
AC_DEFUN([OPENRDMA_TRANSPORT_SETUP], [
	AC_ARG_ENABLE([$1],
		[AS_HELP_STRING([--enable-$1@<:@=auto|yes|no|dl@:>@],
				[the $1 transport (default: $2)])],
		[], [enable_$1=$2])
	openrdma_$1_ok=yes
	openrdma_$1_why=
	AS_IF([test "x$enable_$1" != xno], [$3])
	AS_CASE([$enable_$1],
		[no], [openrdma_$1_mode=no; openrdma_$1_why="disabled"],
		[dl], [AS_IF([test "x$openrdma_$1_ok" = xyes],
			     [openrdma_$1_mode=dl],
			     [AC_MSG_ERROR([transport $1: $openrdma_$1_why])])],
		[yes], [AS_IF([test "x$openrdma_$1_ok" = xyes],
			      [openrdma_$1_mode=builtin],
			      [AC_MSG_ERROR([transport $1: $openrdma_$1_why])])],
		[auto], [AS_IF([test "x$openrdma_$1_ok" = xyes],
			       [openrdma_$1_mode=builtin],
			       [openrdma_$1_mode=no])],
		[AC_MSG_ERROR([--enable-$1 takes auto, yes, no or dl])])
	AS_CASE([$openrdma_$1_mode],
		[builtin], [OPENRDMA_BUILTIN_TRANSPORTS="$OPENRDMA_BUILTIN_TRANSPORTS $1"
			    OPENRDMA_TRANSPORT_SUMMARY="$OPENRDMA_TRANSPORT_SUMMARY
    $1: built-in"],
		[dl], [OPENRDMA_DL_TRANSPORTS="$OPENRDMA_DL_TRANSPORTS $1"
		       OPENRDMA_TRANSPORT_SUMMARY="$OPENRDMA_TRANSPORT_SUMMARY
    $1: plugin (dl)"],
		[OPENRDMA_TRANSPORT_SUMMARY="$OPENRDMA_TRANSPORT_SUMMARY
    $1: no ($openrdma_$1_why)"])
	AM_CONDITIONAL(m4_toupper([TRANSPORT_$1]), [test "x$openrdma_$1_mode" = xbuiltin])
	AM_CONDITIONAL(m4_toupper([TRANSPORT_$1_DL]), [test "x$openrdma_$1_mode" = xdl])
	AS_IF([test "x$openrdma_$1_mode" = xbuiltin],
	      [AC_DEFINE(m4_toupper([OPENRDMA_HAVE_$1]), [1], [transport $1 is built in])])
])
