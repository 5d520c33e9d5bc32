// poppler-glib and cairo for NewsstandCovers: page 1 of a PDF rendered in-process. One wrapper does the whole
// render, so that no GLib or cairo type crosses into Swift beside libvips's (both modules include GLib).
#ifndef ISSUES_CPOPPLER_SHIM_H
#define ISSUES_CPOPPLER_SHIM_H
#include <poppler.h>
#include <cairo.h>
#include <stdlib.h>
#include <string.h>

/// Renders page 1 of the PDF at `path` on white, `width` pixels wide (its height following the page, at most
/// `max_height`), as cairo's ARGB32 pixels (stride width * 4), copied into a buffer freed with cpoppler_free.
/// Returns NULL on failure with a message in `error` (freed with cpoppler_free too) when one is known.
#include <dlfcn.h>
#include <pthread.h>

// The image libraries are opened on first use (dlopen), not linked: every `issues` command would otherwise load
// them and their ~100 dependencies at start (37 MiB and ~80 ms for `issues --version` against 25 MiB and
// ~40 ms), and the release build links with --as-needed, so no DT_NEEDED entry is left for them.
// State as static locals of inline functions: a header's static globals get no storage when Swift imports it.
static inline void **cpoppler_libraries(void) {
    static void *libraries[4];
    static int opened;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!opened) {
        libraries[0] = dlopen("libpoppler-glib.so.8", RTLD_NOW | RTLD_GLOBAL);
        libraries[1] = dlopen("libcairo.so.2", RTLD_NOW | RTLD_GLOBAL);
        libraries[2] = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_GLOBAL);
        libraries[3] = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_GLOBAL);
        opened = 1;
    }
    pthread_mutex_unlock(&lock);
    return libraries;
}
/// Whether the libraries could be opened (false on a machine without them: covers are then unavailable).
static inline int cpoppler_available(void) {
    void **libraries = cpoppler_libraries();
    for (int i = 0; i < 4; i++) if (!libraries[i]) return 0;
    return 1;
}
static inline void *cpoppler_symbol(const char *name) {
    void **libraries = cpoppler_libraries();
    for (int i = 0; i < 4; i++) {
        void *symbol = libraries[i] ? dlsym(libraries[i], name) : NULL;
        if (symbol) return symbol;
    }
    return NULL;
}
#define CPOPPLER_CALL(name) ((__typeof__(&name))cpoppler_symbol(#name))

static inline unsigned char *cpoppler_render_first_page(const char *path, int width, int max_height, int *out_height, char **error) {
    *error = NULL;
    if (!cpoppler_available()) { *error = strdup("poppler-glib (libpoppler-glib8) is not installed"); return NULL; }
    GError *gerror = NULL;
    char *uri = CPOPPLER_CALL(g_filename_to_uri)(path, NULL, &gerror);
    if (!uri) { if (gerror) { *error = strdup(gerror->message); CPOPPLER_CALL(g_error_free)(gerror); } return NULL; }
    PopplerDocument *document = CPOPPLER_CALL(poppler_document_new_from_file)(uri, NULL, &gerror);
    CPOPPLER_CALL(g_free)(uri);
    if (!document) { if (gerror) { *error = strdup(gerror->message); CPOPPLER_CALL(g_error_free)(gerror); } return NULL; }
    if (CPOPPLER_CALL(poppler_document_get_n_pages)(document) < 1) { *error = strdup("the PDF has no pages"); CPOPPLER_CALL(g_object_unref)(document); return NULL; }
    PopplerPage *page = CPOPPLER_CALL(poppler_document_get_page)(document, 0);
    if (!page) { *error = strdup("page 1 cannot be read"); CPOPPLER_CALL(g_object_unref)(document); return NULL; }
    double page_width = 0, page_height = 0;
    CPOPPLER_CALL(poppler_page_get_size)(page, &page_width, &page_height);
    if (!(page_width > 0.5 && page_height > 0.5)) {
        *error = strdup("page 1 has no size"); CPOPPLER_CALL(g_object_unref)(page); CPOPPLER_CALL(g_object_unref)(document); return NULL;
    }
    double scale = width / page_width;
    int height = (int)(page_height * scale + 0.5);
    if (height < 1) height = 1;
    if (height > max_height) height = max_height;
    // Drawn straight into the buffer returned (cairo's stride for ARGB32 is width * 4): one page-sized buffer,
    // not cairo's and a copy of it.
    size_t size = (size_t)width * height * 4;
    unsigned char *pixels = CPOPPLER_CALL(cairo_format_stride_for_width)(CAIRO_FORMAT_ARGB32, width) == width * 4 ? malloc(size) : NULL;
    cairo_surface_t *surface = pixels
        ? CPOPPLER_CALL(cairo_image_surface_create_for_data)(pixels, CAIRO_FORMAT_ARGB32, width, height, width * 4) : NULL;
    if (surface && CPOPPLER_CALL(cairo_surface_status)(surface) == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = CPOPPLER_CALL(cairo_create)(surface);
        CPOPPLER_CALL(cairo_set_source_rgb)(cr, 1, 1, 1);
        CPOPPLER_CALL(cairo_paint)(cr);
        CPOPPLER_CALL(cairo_scale)(cr, scale, scale);
        CPOPPLER_CALL(poppler_page_render)(page, cr);
        CPOPPLER_CALL(cairo_destroy)(cr);
        CPOPPLER_CALL(cairo_surface_flush)(surface);
    } else {
        free(pixels); pixels = NULL; *error = strdup("cannot make the page's image");
    }
    if (surface) CPOPPLER_CALL(cairo_surface_destroy)(surface);
    CPOPPLER_CALL(g_object_unref)(page);
    CPOPPLER_CALL(g_object_unref)(document);
    *out_height = height;
    return pixels;
}

static inline void cpoppler_free(void *pointer) { free(pointer); }
#endif
