#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H
// Linux calls that Swift's Glibc module does not import (they need _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <unistd.h>
// For `struct stat`: Swift attributes it to a C module whose headers include <sys/stat.h>, and
// MemberImportVisibility then asks each file using its members for that module. Without this line
// that was only CLibArchive (through <archive.h>), so file-system code imported libarchive for it.
// The first of the two modules a compile job loads owns the declaration, so every file that imports
// CLibArchive imports CSystemShims on the line before it; otherwise the owner would depend on how
// the build happens to batch files together.
#include <sys/stat.h>

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
#endif
