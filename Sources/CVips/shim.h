// libvips for NewsstandCovers: <vips/vips.h> and static inline wrappers of the variadic calls (optional
// arguments end in NULL), which Swift cannot call. Each wrapper fixes the options a cover needs.
#ifndef ISSUES_CVIPS_SHIM_H
#define ISSUES_CVIPS_SHIM_H
#include <vips/vips.h>
#include <malloc.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

// The image libraries are opened on first use (dlopen), not linked: every `issues` command would otherwise load
// them and their ~100 dependencies at start (37 MiB and ~80 ms for `issues --version` against 25 MiB and
// ~40 ms), and the release build links with --as-needed, so no DT_NEEDED entry is left for them.
// State as static locals of inline functions: a header's static globals get no storage when Swift imports it.
static inline void **cvips_libraries(void) {
    static void *libraries[3];
    static int opened;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!opened) {
        libraries[0] = dlopen("libvips.so.42", RTLD_NOW | RTLD_GLOBAL);
        libraries[1] = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_GLOBAL);
        libraries[2] = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_GLOBAL);
        opened = 1;
    }
    pthread_mutex_unlock(&lock);
    return libraries;
}
/// Whether the libraries could be opened (false on a machine without them: covers are then unavailable).
static inline int cvips_available(void) {
    void **libraries = cvips_libraries();
    for (int i = 0; i < 3; i++) if (!libraries[i]) return 0;
    return 1;
}
static inline void *cvips_symbol(const char *name) {
    void **libraries = cvips_libraries();
    for (int i = 0; i < 3; i++) {
        void *symbol = libraries[i] ? dlsym(libraries[i], name) : NULL;
        if (symbol) return symbol;
    }
    return NULL;
}
#define CVIPS_CALL(name) ((__typeof__(&name))cvips_symbol(#name))


/// Drops libvips's GLib warnings ("error in tile …"): a refused image's reason is kept by the caller, and
/// stderr is the command's, not libvips's.
static inline void cvips_quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// The folder of libvips's optional modules (vips-modules-8.14 beside libvips.so.42), found in /proc/self/maps;
/// empty when libvips is not mapped.
static inline const char *cvips_modules_folder(void) {
    static char folder[4096];
    if (folder[0]) return folder;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return folder;
    char line[4096 + 256];
    while (fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        char *name = path ? strstr(path, "/libvips.so.42") : NULL;
        if (!name) continue;
        *name = 0;
        snprintf(folder, sizeof folder, "%s/vips-modules-%d.%d", path, CVIPS_CALL(vips_version)(0), CVIPS_CALL(vips_version)(1));
        break;
    }
    fclose(maps);
    return folder;
}

/// Loads libvips's optional modules, once: the loaders of formats the built-in ones do not read (HEIF and AVIF,
/// JPEG XL; ImageMagick and OpenSlide, which stay blocked as untrusted). GModule runs each module's
/// g_module_check_init, which registers its loaders, as vips_init would have.
static inline void cvips_load_modules(void) {
    static int loaded;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!loaded) {
        loaded = 1;
        const char *folder = cvips_modules_folder();
        GDir *dir = folder[0] ? CVIPS_CALL(g_dir_open)(folder, 0, NULL) : NULL;
        const char *name;
        while (dir && (name = CVIPS_CALL(g_dir_read_name)(dir))) {
            if (!CVIPS_CALL(g_str_has_suffix)(name, ".so")) continue;
            char *path = CVIPS_CALL(g_build_filename)(folder, name, NULL);
            (void)CVIPS_CALL(g_module_open)(path, G_MODULE_BIND_LAZY);
            CVIPS_CALL(g_free)(path);
        }
        if (dir) CVIPS_CALL(g_dir_close)(dir);
        CVIPS_CALL(vips_block_untrusted_set)(TRUE);
    }
    pthread_mutex_unlock(&lock);
}

/// vips_init once, then: no operation cache (covers are made once each; the cache only holds memory), the
/// loaders libvips marks untrusted blocked (vips_block_untrusted_set), one worker thread per image.
static inline int cvips_start(void) {
    if (!cvips_available()) return -2;
    // libvips reads VIPS_WARNING at its start: set, its warnings are dropped (the handler below does the same
    // for a libvips that does not).
    CVIPS_CALL(g_setenv)("VIPS_WARNING", "0", FALSE);
    // vips_init loads every module of its modules folder (ImageMagick, OpenSlide, HEIF, JPEG XL, PDF) and their
    // ~30 libraries: 6 MiB resident that JPEG, PNG, WebP and GIF covers never use (a C program linking libvips:
    // 29.3 MiB after vips_init, 23.5 MiB without the modules). vips_init looks for them under $VIPSHOME, so a
    // VIPSHOME under which no folder can exist (/dev/null is a file) keeps them out; cvips_loader loads them
    // when an image is in none of the built-in formats. A VIPSHOME set by the user is left as it is. (Set below,
    // after the mallopt calls.)
    // glibc's defaults cost covers most of their memory, measured on 60 covers of 1600 x 2100 JPEGs (debug
    // build): each thread that allocates gets an arena of its own (up to 8 per core: libvips's workers and the
    // blocking pool's threads), and after the first image buffer is freed the mmap threshold rises to its size,
    // so the next images come from the arenas and fragment them: 220 MiB peak; with the threshold fixed at
    // 1 MiB (image buffers mapped and unmapped whole) and two arenas, about 85 MiB. The arena count is the
    // process's to choose before its threads start (the `issues` command: two, one for `covers`), so it is
    // not set here.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    int home = !CVIPS_CALL(g_getenv)("VIPSHOME");
    if (home) CVIPS_CALL(g_setenv)("VIPSHOME", "/dev/null", TRUE);
    int status = CVIPS_CALL(vips_init)("issues");
    // Not left for the hooks and other programs this process starts.
    if (home) CVIPS_CALL(g_unsetenv)("VIPSHOME");
    if (status != 0) return -1;
    CVIPS_CALL(g_log_set_handler)("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, cvips_quiet, NULL);
    CVIPS_CALL(vips_cache_set_max)(0);
    CVIPS_CALL(vips_cache_set_max_mem)(0);
    CVIPS_CALL(vips_block_untrusted_set)(TRUE);
    CVIPS_CALL(vips_concurrency_set)(1);
    return 0;
}

/// The loader that would read `buf` ("jpegload_buffer", …), or NULL when none would.
/// Tries the built-in loaders first, then libvips's modules (loaded on that first miss).
static inline const char *cvips_loader(const void *buf, size_t len) {
    const char *loader = CVIPS_CALL(vips_foreign_find_load_buffer)(buf, len);
    if (loader) return loader;
    CVIPS_CALL(vips_error_clear)();
    cvips_load_modules();
    return CVIPS_CALL(vips_foreign_find_load_buffer)(buf, len);
}

/// The image's header only (pixels are not decoded until asked for): width and height for the pixel limit.
static inline VipsImage *cvips_header(const void *buf, size_t len) {
    return CVIPS_CALL(vips_image_new_from_buffer)(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}

/// A thumbnail `width` pixels wide (never enlarged), decoded with shrink-on-load where the format allows,
/// failing on any decoding error (a truncated or corrupt file), alpha flattened on white, in sRGB.
static inline int cvips_thumbnail(const void *buf, size_t len, int width, VipsImage **out) {
    VipsImage *thumb = NULL;
    if (CVIPS_CALL(vips_thumbnail_buffer)((void *)buf, len, &thumb, width, "height", 10000000, "size", VIPS_SIZE_DOWN,
            "option_string", "fail_on=error", NULL) != 0) return -1;
    if (!CVIPS_CALL(vips_image_hasalpha)(thumb)) { *out = thumb; return 0; }
    VipsArrayDouble *white = CVIPS_CALL(vips_array_double_newv)(1, 255.0);
    int status = CVIPS_CALL(vips_flatten)(thumb, out, "background", white, NULL);
    CVIPS_CALL(vips_area_unref)(VIPS_AREA(white));
    CVIPS_CALL(g_object_unref)(thumb);
    return status;
}

/// `in` scaled to `width` pixels wide (never enlarged), for images already decoded (a rendered page).
static inline int cvips_thumbnail_image(VipsImage *in, int width, VipsImage **out) {
    return CVIPS_CALL(vips_thumbnail_image)(in, out, width, "height", 10000000, "size", VIPS_SIZE_DOWN, NULL);
}

/// JPEG at quality 85, metadata stripped; the buffer is freed with cvips_free.
static inline int cvips_jpeg(VipsImage *in, void **buf, size_t *len) {
    return CVIPS_CALL(vips_jpegsave_buffer)(in, buf, len, "Q", 85, "strip", TRUE, "optimize_coding", TRUE, NULL);
}

/// PNG (the contact sheet); the buffer is freed with cvips_free.
static inline int cvips_png(VipsImage *in, void **buf, size_t *len) {
    return CVIPS_CALL(vips_pngsave_buffer)(in, buf, len, "compression", 6, NULL);
}

/// Frees a buffer handed to cvips_from_bgra when the image made on it closes.
static inline void cvips_free_pixels(VipsImage *image, void *pixels) { (void)image; free(pixels); }

/// An RGB image from cairo's ARGB32 pixels (B, G, R, A bytes on little-endian, premultiplied, drawn on white
/// so alpha is 255), the bands reordered. Not copied: the image takes `data` (malloc'd) and frees it when it
/// closes, after every image made from it; on failure it is freed at once.
static inline int cvips_from_bgra(void *data, int width, int height, VipsImage **out) {
    VipsImage *bgra = CVIPS_CALL(vips_image_new_from_memory)(data, (size_t)width * height * 4, width, height, 4, VIPS_FORMAT_UCHAR);
    if (!bgra) { free(data); return -1; }
    CVIPS_CALL(g_signal_connect_data)(bgra, "postclose", G_CALLBACK(cvips_free_pixels), data, NULL, (GConnectFlags)0);
    VipsImage *r = NULL, *g = NULL, *b = NULL;
    int status = CVIPS_CALL(vips_extract_band)(bgra, &r, 2, NULL) || CVIPS_CALL(vips_extract_band)(bgra, &g, 1, NULL)
        || CVIPS_CALL(vips_extract_band)(bgra, &b, 0, NULL);
    if (status == 0) {
        VipsImage *bands[3] = {r, g, b};
        status = CVIPS_CALL(vips_bandjoin)(bands, out, 3, NULL);
        if (status == 0) (*out)->Type = VIPS_INTERPRETATION_sRGB;
    }
    if (r) CVIPS_CALL(g_object_unref)(r);
    if (g) CVIPS_CALL(g_object_unref)(g);
    if (b) CVIPS_CALL(g_object_unref)(b);
    CVIPS_CALL(g_object_unref)(bgra);
    return status;
}

/// A `width` × `height` sRGB image of one colour.
static inline int cvips_solid(int width, int height, double red, double green, double blue, VipsImage **out) {
    VipsImage *black = NULL, *coloured = NULL;
    double multiply[3] = {1, 1, 1};
    double add[3] = {red, green, blue};
    if (CVIPS_CALL(vips_black)(&black, width, height, "bands", 3, NULL) != 0) return -1;
    int status = CVIPS_CALL(vips_linear)(black, &coloured, multiply, add, 3, NULL);
    CVIPS_CALL(g_object_unref)(black);
    if (status != 0) return -1;
    status = CVIPS_CALL(vips_cast_uchar)(coloured, out, NULL);
    CVIPS_CALL(g_object_unref)(coloured);
    if (status == 0) (*out)->Type = VIPS_INTERPRETATION_sRGB;
    return status;
}

/// Text (Pango markup) as a one-band mask, wrapped at `width` pixels, centred; fails when no font is found.
static inline int cvips_text(const char *markup, const char *font, int width, int dpi, VipsImage **out) {
    return CVIPS_CALL(vips_text)(out, markup, "font", font, "width", width, "dpi", dpi, "align", VIPS_ALIGN_CENTRE, "wrap",
        VIPS_TEXT_WRAP_WORD, NULL);
}

/// `in` placed at (x, y) in a `width` × `height` black canvas.
static inline int cvips_embed(VipsImage *in, int x, int y, int width, int height, VipsImage **out) {
    return CVIPS_CALL(vips_embed)(in, out, x, y, width, height, NULL);
}

/// `ink` where `mask` is set, `base` elsewhere, mixed by the mask's level (anti-aliased text).
static inline int cvips_blend(VipsImage *mask, VipsImage *ink, VipsImage *base, VipsImage **out) {
    return CVIPS_CALL(vips_ifthenelse)(mask, ink, base, out, "blend", TRUE, NULL);
}

/// `tiles` side by side, `across` a row, `gap` pixels apart on a `background` grey (the contact sheet).
static inline int cvips_arrayjoin(VipsImage **tiles, int count, int across, int gap, VipsImage **out) {
    VipsArrayDouble *grey = CVIPS_CALL(vips_array_double_newv)(1, 40.0);
    int status = CVIPS_CALL(vips_arrayjoin)(tiles, out, count, "across", across, "shim", gap, "background", grey, "halign",
        VIPS_ALIGN_CENTRE, "valign", VIPS_ALIGN_CENTRE, NULL);
    CVIPS_CALL(vips_area_unref)(VIPS_AREA(grey));
    return status;
}

/// `in` computed into memory once, so that several outputs (a JPEG, a smaller thumbnail) do not decode it again.
static inline VipsImage *cvips_copy_memory(VipsImage *in) { return CVIPS_CALL(vips_image_copy_memory)(in); }

/// Hands the heap's free memory back to the system after a cover (malloc_trim): the next cover starts low.
static inline void cvips_release_memory(void) { malloc_trim(0); }

static inline void cvips_unref(VipsImage *image) { CVIPS_CALL(g_object_unref)(image); }
static inline void cvips_free(void *buffer) { CVIPS_CALL(g_free)(buffer); }
/// libvips's last error message, then cleared (it is per process: read at once after a failed call).
static inline const char *cvips_error(void) {
    return cvips_available() ? CVIPS_CALL(vips_error_buffer)() : "libvips (libvips42) is not installed";
}
static inline void cvips_error_clear(void) { if (cvips_available()) CVIPS_CALL(vips_error_clear)(); }
#endif
