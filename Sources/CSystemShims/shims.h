#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H
// Linux calls that Swift's Glibc module does not import (they need _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
// For `struct stat`: Swift attributes it to a C module whose headers include <sys/stat.h>, and
// MemberImportVisibility then asks each file using its members for that module. Without this line
// that was only CLibArchive (through <archive.h>), so file-system code imported libarchive for it.
// The first of the two modules a compile job loads owns the declaration, so every file that imports
// CLibArchive imports CSystemShims on the line before it; otherwise the owner would depend on how
// the build happens to batch files together.
#include <sys/stat.h>
// `statfs` and its `f_type`: the catalog keeps SQLite's rollback journal on network file systems.
#include <sys/vfs.h>
#ifdef __linux__
// Declared here rather than through <sys/random.h>, whose includes clash with Swift's Glibc module.
extern ssize_t getrandom(void *buffer, size_t length, unsigned int flags);
#endif

/// Fills `buffer` with `count` random bytes from the kernel (getrandom(2), no file opened): the
/// standard library's generator opened /dev/urandom for each value in a static build, two opens per
/// imported issue. Returns 0, or -1 when fewer bytes came.
static inline int newsstand_random_bytes(void *buffer, unsigned long count) {
#ifdef __linux__
    unsigned long done = 0;
    while (done < count) {
        long n = getrandom((char *)buffer + done, count - done, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (unsigned long)n;
    }
    return 0;
#else
    arc4random_buf(buffer, count);
    return 0;
#endif
}

#ifdef __GLIBC__
#include <malloc.h>
#endif

/// Hands memory that malloc keeps after frees back to the system (malloc_trim(3)); a no-op elsewhere.
/// The server calls it after reading 100,000 index lines through large temporary buffers.
static inline void newsstand_return_freed_memory(void) {
#ifdef __GLIBC__
    (void)malloc_trim(0);
#endif
}

/// Caps how many malloc arenas glibc makes (mallopt(M_ARENA_MAX)); a no-op elsewhere.
static inline void newsstand_limit_malloc_arenas(int count) {
#ifdef __GLIBC__
    (void)mallopt(M_ARENA_MAX, count);
#endif
}

/// Starts writeback of a byte range without waiting for it (sync_file_range(2) with
/// SYNC_FILE_RANGE_WRITE), so that a later fsync of a large download has little left to do.
static inline int newsstand_start_writeback(int fd, long long offset, long long count) {
#ifdef __linux__
    return sync_file_range(fd, (off64_t)offset, (off64_t)count, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)count;
    return 0;
#endif
}

/// Flushes every file system buffer of the file system holding `fd` (syncfs(2)): one flush for a
/// batch of thousands of new catalog records instead of one fsync each.
static inline int newsstand_syncfs(int fd) {
#ifdef __linux__
    return syncfs(fd);
#else
    (void)fd;
    sync();
    return 0;
#endif
}
/// The first hole at or after `offset` in the file of `fd` (lseek(2) with SEEK_HOLE; the end of the file
/// where the file system keeps no holes), or -1 with errno set (ENXIO: `offset` is at or past the end).
static inline long long newsstand_seek_hole(int fd, long long offset) {
#ifdef SEEK_HOLE
    return (long long)lseek(fd, (off_t)offset, SEEK_HOLE);
#else
    (void)fd; (void)offset;
    errno = EINVAL;
    return -1;
#endif
}

/// An exclusive (write) lock of the one byte at `offset`, for fcntl.
static inline struct flock newsstand_write_lock_of_byte(long long offset) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = (off_t)offset;
    lock.l_len = 1;
    return lock;
}

/// Tries an exclusive open-file-description lock on one byte of `fd` (fcntl F_OFD_SETLK): 0 when taken,
/// -1 with errno (EAGAIN or EACCES when another open file description holds it). Released when the
/// descriptor is closed, or the process dies; two descriptors of one process exclude each other.
static inline int newsstand_try_lock_byte(int fd, long long offset) {
#ifdef F_OFD_SETLK
    struct flock lock = newsstand_write_lock_of_byte(offset);
    return fcntl(fd, F_OFD_SETLK, &lock);
#else
    (void)fd; (void)offset;
    errno = ENOSYS;
    return -1;
#endif
}

/// Whether another open file description holds a lock on one byte of `fd` (fcntl F_OFD_GETLK): 1 held,
/// 0 free, -1 with errno.
static inline int newsstand_byte_is_locked(int fd, long long offset) {
#ifdef F_OFD_GETLK
    struct flock lock = newsstand_write_lock_of_byte(offset);
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
#else
    (void)fd; (void)offset;
    errno = ENOSYS;
    return -1;
#endif
}
#endif
