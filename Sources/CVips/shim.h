// libvips for NewsstandCovers: <vips/vips.h> and static inline wrappers of the variadic calls (optional
// arguments end in NULL), which Swift cannot call. Each wrapper fixes the options a cover needs.
#ifndef ISSUES_CVIPS_SHIM_H
#define ISSUES_CVIPS_SHIM_H
#include <vips/vips.h>
#include <malloc.h>
#include <dlfcn.h>
#include <pthread.h>

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

/// vips_init once, then: no operation cache (covers are made once each; the cache only holds memory), the
/// loaders libvips marks untrusted blocked (vips_block_untrusted_set), one worker thread per image.
static inline int cvips_start(void) {
    if (!cvips_available()) return -2;
    // libvips reads VIPS_WARNING at its start: set, its warnings are dropped (the handler below does the same
    // for a libvips that does not).
    CVIPS_CALL(g_setenv)("VIPS_WARNING", "0", FALSE);
    // glibc's defaults cost covers most of their memory, measured on 60 covers of 1600 x 2100 JPEGs (debug
    // build): each thread that allocates gets an arena of its own (up to 8 per core: libvips's workers and the
    // blocking pool's threads), and after the first image buffer is freed the mmap threshold rises to its size,
    // so the next images come from the arenas and fragment them: 220 MiB peak; with the threshold fixed at
    // 1 MiB (image buffers mapped and unmapped whole) and two arenas, about 85 MiB. Set when the first cover is
    // made, so a download run before it keeps its arenas.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_ARENA_MAX, 2);
    if (CVIPS_CALL(vips_init)("issues") != 0) return -1;
    CVIPS_CALL(g_log_set_handler)("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, cvips_quiet, NULL);
    CVIPS_CALL(vips_cache_set_max)(0);
    CVIPS_CALL(vips_cache_set_max_mem)(0);
    CVIPS_CALL(vips_block_untrusted_set)(TRUE);
    CVIPS_CALL(vips_concurrency_set)(1);
    return 0;
}

/// The loader that would read `buf` ("jpegload_buffer", …), or NULL when none would.
static inline const char *cvips_loader(const void *buf, size_t len) {
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

/// An RGB image from cairo's ARGB32 pixels (B, G, R, A bytes on little-endian, premultiplied, drawn on white
/// so alpha is 255): copied, then the bands reordered.
static inline int cvips_from_bgra(const void *data, int width, int height, VipsImage **out) {
    VipsImage *bgra = CVIPS_CALL(vips_image_new_from_memory_copy)(data, (size_t)width * height * 4, width, height, 4, VIPS_FORMAT_UCHAR);
    if (!bgra) return -1;
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
