#ifndef CLIBARCHIVE_SHIM_H
#define CLIBARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

/*
 * Entry file types as plain constants: archive_entry.h spells them as casts
 * (`((__LA_MODE_T)0100000)`), which the Swift importer does not bring in.
 */
static const unsigned int CLIBARCHIVE_AE_IFMT = 0170000;
static const unsigned int CLIBARCHIVE_AE_IFREG = 0100000;
static const unsigned int CLIBARCHIVE_AE_IFLNK = 0120000;
static const unsigned int CLIBARCHIVE_AE_IFSOCK = 0140000;
static const unsigned int CLIBARCHIVE_AE_IFCHR = 0020000;
static const unsigned int CLIBARCHIVE_AE_IFBLK = 0060000;
static const unsigned int CLIBARCHIVE_AE_IFDIR = 0040000;
static const unsigned int CLIBARCHIVE_AE_IFIFO = 0010000;

/*
 * unshare(CLONE_FS) for the calling thread only: gives it its own working
 * directory and umask. glibc declares unshare() and CLONE_FS in <sched.h>
 * only under _GNU_SOURCE, which the Swift Glibc module is built without, so
 * the declaration is repeated here (block scope, so it is not exported).
 * Returns 0 on success, else -1 with errno set; on non-Linux systems it
 * always fails with ENOSYS.
 */
#if defined(__linux__)
#include <errno.h>
static inline int clibarchive_unshare_fs(void) {
    extern int unshare(int flags);
    return unshare(0x00000200 /* CLONE_FS */);
}
#else
#include <errno.h>
static inline int clibarchive_unshare_fs(void) {
    errno = ENOSYS;
    return -1;
}
#endif

/*
 * A locale whose LC_CTYPE is UTF-8, for uselocale() on the thread that runs
 * libarchive: libarchive converts entry names to and from the *current*
 * locale's character set, and a Swift process runs in the "C" (ASCII) locale,
 * where a UTF-8 name such as "東京" cannot be converted. Returns (locale_t)0
 * when no UTF-8 locale exists; free with freelocale().
 */
static inline locale_t clibarchive_new_utf8_locale(void) {
    static const char *const names[] = { "C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        locale_t loc = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
        if (loc != (locale_t)0) {
            return loc;
        }
    }
    return (locale_t)0;
}

#endif
