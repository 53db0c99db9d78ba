/*
 * play.c: a .cine file played through the C ABI, as an engine would.
 *
 *   cargo build --release -p cinestream-ffi
 *   cc -std=c11 -Wall -Wextra -Werror -O2 -I ffi/include examples/c/play.c \
 *      target/release/libcinestream_ffi.a -lpthread -ldl -lm -o play
 *   ./play clip.cine
 *
 * It opens the file, prints the skeleton, samples the stream at fixed
 * times, plays a player forward, backward (rate -1) and with seeks, reads
 * the file itself and hands the stream its pages (host-driven I/O), and
 * prints every pose as lines "pose <label> <time bits> <bone> <10 f32 bits>"
 * in hex, so that CI can compare them with the Rust sampler's
 * (ffi/examples/reference_poses.rs prints the same lines from the library),
 * then the stream's stats. Its float tracks (morph weights, a field of
 * view) are listed by name, kind and component count, and their values
 * printed as lines "floats <time bits> <track> <name> <kind> <components>
 * <offset> <f32 bits...>", compared the same way. It also checks a bone
 * remap against the plain
 * pose and that misuse (NULL, a freed handle, a wrong-typed handle) is
 * refused with a message. Exit status 0 when all went as expected.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cinestream.h"

/* Fails the program with the library's message when a call fails. */
#define CHECK(call)                                                            \
    do {                                                                       \
        CsStatus status_ = (call);                                             \
        if (status_ != CS_STATUS_OK) {                                         \
            fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, \
                    #call, (int)status_, cs_last_error());                     \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* The call must fail with `expected`; prints the message it left. */
static int expect_refused(const char *what, CsStatus status, CsStatus expected) {
    if (status != expected) {
        fprintf(stderr, "misuse %s: status %d, expected %d\n", what, (int)status,
                (int)expected);
        return 1;
    }
    printf("refused as expected: %s -> %s\n", what, cs_last_error());
    return 0;
}

static uint32_t bits_f32(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static uint64_t bits_f64(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static void print_pose(const char *label, double time, const CsTransform *pose,
                       uint32_t bones) {
    for (uint32_t b = 0; b < bones; b++) {
        const CsTransform *t = &pose[b];
        printf("pose %s %016" PRIx64 " %u", label, bits_f64(time), b);
        for (int i = 0; i < 4; i++) printf(" %08" PRIx32, bits_f32(t->rotation[i]));
        for (int i = 0; i < 3; i++) printf(" %08" PRIx32, bits_f32(t->translation[i]));
        for (int i = 0; i < 3; i++) printf(" %08" PRIx32, bits_f32(t->scale[i]));
        printf("\n");
    }
}

static const char *float_kind_key(uint32_t kind) {
    switch (kind) {
    case CS_FLOAT_KIND_MORPH_WEIGHT: return "morph_weight";
    case CS_FLOAT_KIND_FIELD_OF_VIEW: return "field_of_view";
    default: return "generic";
    }
}

/* Every float track's values at the stream's 25 fixed times, one line per
 * track and time, each track found by the name, kind, component count and
 * offset the ABI gives. */
static void print_floats(CsStream *stream, const CsClipInfo *info) {
    float *values = calloc(info->float_value_count ? info->float_value_count : 1,
                           sizeof *values);
    if (!values) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < info->float_track_count; i++) {
        char name[256];
        size_t length = 0;
        CsFloatTrackInfo track;
        CHECK(cs_stream_float_track_name(stream, i, name, sizeof name, &length));
        CHECK(cs_stream_float_track_info(stream, i, &track));
        int32_t found = -1;
        CHECK(cs_stream_find_float_track(stream, name, &found));
        if (found != (int32_t)i) {
            fprintf(stderr, "float track %u: %s found at %d\n", i, name, found);
            exit(1);
        }
        if (i < 3 || i + 1 == info->float_track_count)
            printf("  float %3u %-28s %s, %u component(s) at %u\n", i, name,
                   float_kind_key(track.kind), track.components, track.offset);
        else if (i == 3)
            printf("  ...\n");
    }
    for (int k = 0; k <= 24; k++) {
        double t = info->duration * k / 24.0;
        CHECK(cs_stream_sample_floats(stream, t, values, info->float_value_count));
        for (uint32_t i = 0; i < info->float_track_count; i++) {
            char name[256];
            size_t length = 0;
            CsFloatTrackInfo track;
            CHECK(cs_stream_float_track_name(stream, i, name, sizeof name, &length));
            CHECK(cs_stream_float_track_info(stream, i, &track));
            printf("floats %016" PRIx64 " %u %s %s %u %u", bits_f64(t), i, name,
                   float_kind_key(track.kind), track.components, track.offset);
            for (uint32_t c = 0; c < track.components; c++)
                printf(" %08" PRIx32, bits_f32(values[track.offset + c]));
            printf("\n");
        }
    }
    free(values);
}

/* The player's pose after a step, printed; its root motion on stderr-free
 * stdout in decimal for a person to read. */
static void show_player(CsPlayer *player, const char *label, CsTransform *pose,
                        uint32_t bones) {
    CsPlayerState state;
    CHECK(cs_player_state(player, &state));
    CHECK(cs_player_pose(player, pose, bones, NULL, 0));
    print_pose(label, state.time, pose, bones);
}

/* The engine's own file reads: `len` bytes at `offset` of `file`. */
static uint8_t *read_range(FILE *file, uint64_t offset, uint64_t len) {
    uint8_t *bytes = malloc(len ? len : 1);
    if (!bytes) return NULL;
    if (fseek(file, (long)offset, SEEK_SET) != 0 || fread(bytes, 1, len, file) != len) {
        free(bytes);
        return NULL;
    }
    return bytes;
}

/* Host-driven I/O, as an engine with its own asset loader does it: the
 * engine reads the file's prefix and opens the stream over it; a pose
 * whose page is not resident is NOT_READY, and the engine reads the pages
 * the stream wants and hands them over. Poses print as "pose host ...". */
static int play_host(const char *path, const double *times, size_t count) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    fseek(file, 0, SEEK_END);
    uint64_t file_len = (uint64_t)ftell(file);
    uint8_t *header = read_range(file, 0, CS_HEADER_LEN);
    uint64_t prefix_len = 0;
    if (!header) return 1;
    CHECK(cs_prefix_len(header, CS_HEADER_LEN, file_len, &prefix_len));
    free(header);
    uint8_t *prefix = read_range(file, 0, prefix_len);
    if (!prefix) return 1;
    CsStreamOptions options;
    CHECK(cs_stream_options_default(&options));
    options.missing_page = CS_MISSING_PAGE_NOT_READY;
    CsStream *stream = NULL;
    CHECK(cs_stream_open_host(prefix, (size_t)prefix_len, file_len, &options, &stream));
    free(prefix); /* copied by the library */
    CsClipInfo info;
    CHECK(cs_stream_info(stream, &info));
    CsTransform *pose = calloc(info.bone_count, sizeof *pose);
    if (!pose) return 1;
    unsigned provided = 0;
    for (size_t k = 0; k < count; k++) {
        uint32_t quality = 0;
        CsStatus status;
        while ((status = cs_stream_sample(stream, times[k], pose, info.bone_count, NULL, 0,
                                          &quality)) == CS_STATUS_NOT_READY) {
            CsPageRequest wanted[4];
            size_t n = 0;
            CHECK(cs_stream_wanted_pages(stream, wanted, 4, &n));
            for (size_t i = 0; i < n; i++) {
                uint8_t *bytes = read_range(file, wanted[i].offset, wanted[i].len);
                uint32_t installed = 0;
                if (!bytes) return 1;
                CHECK(cs_stream_provide_page(stream, wanted[i].page, bytes, (size_t)wanted[i].len,
                                             &installed));
                free(bytes);
                provided += installed;
            }
        }
        CHECK(status);
        print_pose("host", times[k], pose, info.bone_count);
    }
    printf("host-driven: %u pages read by the engine and provided\n", provided);
    free(pose);
    CHECK(cs_stream_free(stream));
    fclose(file);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.cine\n", argv[0]);
        return 2;
    }
    printf("cinestream %s\n", cs_version());

    CsStreamOptions options;
    CHECK(cs_stream_options_default(&options));
    options.budget_bytes = 8u << 20;
    options.lookahead_seconds = 2.0;
    options.missing_page = CS_MISSING_PAGE_BLOCK;

    CsStream *stream = NULL;
    CHECK(cs_stream_open_file(argv[1], &options, &stream));

    CsClipInfo info;
    CHECK(cs_stream_info(stream, &info));
    printf("%s: %u bones, %" PRIu64 " samples at %g Hz, %.3f s, %s, %" PRIu64
           " pages%s\n",
           argv[1], info.bone_count, info.sample_count, (double)info.sample_rate,
           info.duration, info.loop_mode == CS_LOOP_WRAP ? "wrap" : "clamp",
           info.page_count, info.has_preview ? ", preview tier" : "");

    uint32_t bones = info.bone_count;
    int32_t *parents = calloc(bones, sizeof *parents);
    CsTransform *pose = calloc(bones, sizeof *pose);
    CsTransform *remapped = calloc(bones, sizeof *remapped);
    int32_t *remap = calloc(bones, sizeof *remap);
    if (!parents || !pose || !remapped || !remap) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    CHECK(cs_stream_bone_parents(stream, parents, bones));
    for (uint32_t b = 0; b < bones; b++) {
        char name[256];
        size_t length = 0;
        CHECK(cs_stream_bone_name(stream, b, name, sizeof name, &length));
        if (b < 8 || b + 2 >= bones)
            printf("  bone %3u %-28s parent %d\n", b, name, parents[b]);
        else if (b == 8)
            printf("  ...\n");
    }

    print_floats(stream, &info);

    /* The stream sampled at fixed times: 25 across the clip, and a few
     * between samples and outside the clip (clamped or wrapped). */
    for (int k = 0; k <= 24; k++) {
        double t = info.duration * k / 24.0;
        uint32_t quality = 0;
        CHECK(cs_stream_sample(stream, t, pose, bones, NULL, 0, &quality));
        print_pose("stream", t, pose, bones);
    }
    const double odd[] = {0.0123, 1.0 / 3.0, -0.5, 1e9};
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
        uint32_t quality = 0;
        CHECK(cs_stream_sample(stream, odd[k], pose, bones, NULL, 0, &quality));
        print_pose("stream", odd[k], pose, bones);
    }

    /* A remap into the engine's own order (reversed), checked against the
     * plain pose. */
    for (uint32_t b = 0; b < bones; b++) remap[b] = (int32_t)(bones - 1 - b);
    uint32_t quality = 0;
    CHECK(cs_stream_sample(stream, 0.75, pose, bones, NULL, 0, &quality));
    CHECK(cs_stream_sample(stream, 0.75, remapped, bones, remap, bones, &quality));
    for (uint32_t b = 0; b < bones; b++) {
        if (memcmp(&pose[b], &remapped[bones - 1 - b], sizeof(CsTransform)) != 0) {
            fprintf(stderr, "remap: bone %u differs\n", b);
            return 1;
        }
    }
    printf("remap: %u bones in reverse order, equal to the plain pose\n", bones);

    /* A player: forward at 30 frames a second, backward, then seeks. */
    CsPlayerOptions player_options;
    CHECK(cs_player_options_default(&player_options));
    CsPlayer *player = NULL;
    CHECK(cs_player_new(stream, &player_options, &player));
    float travelled[3] = {0, 0, 0};
    for (int frame = 0; frame < 45; frame++) {
        CsAdvance step;
        CHECK(cs_player_advance(player, 1.0 / 30.0, &step));
        for (int i = 0; i < 3; i++) travelled[i] += step.root_delta[i];
        show_player(player, "forward", pose, bones);
    }
    printf("forward: root motion of bone 0 (%.3f, %.3f, %.3f)\n", (double)travelled[0],
           (double)travelled[1], (double)travelled[2]);
    CHECK(cs_player_set_rate(player, -1.0));
    for (int frame = 0; frame < 30; frame++) {
        CsAdvance step;
        CHECK(cs_player_advance(player, 1.0 / 30.0, &step));
        show_player(player, "backward", pose, bones);
    }
    CHECK(cs_player_set_rate(player, 1.0));
    const double seeks[] = {info.duration * 0.8, 0.25, info.duration * 0.5};
    for (size_t k = 0; k < sizeof seeks / sizeof seeks[0]; k++) {
        uint32_t ready = 0;
        CHECK(cs_player_seek(player, seeks[k], &ready));
        show_player(player, "seek", pose, bones);
        for (int frame = 0; frame < 5; frame++) {
            CsAdvance step;
            CHECK(cs_player_advance(player, 1.0 / 30.0, &step));
            show_player(player, "after-seek", pose, bones);
        }
    }
    CHECK(cs_player_set_loop_mode(player, CS_LOOP_WRAP));
    for (int frame = 0; frame < 20; frame++) {
        CsAdvance step;
        CHECK(cs_player_advance(player, 0.25, &step));
        show_player(player, "wrap", pose, bones);
    }

    /* The same file read by the engine itself: the pose at each time. */
    const double host_times[] = {0.0, info.duration * 0.9, 0.5, info.duration, 1.0 / 3.0};
    if (play_host(argv[1], host_times, sizeof host_times / sizeof host_times[0]) != 0) return 1;

    CsStreamStats stats;
    CHECK(cs_stream_stats(stream, &stats));
    printf("stats: %" PRIu64 " page loads (%" PRIu64 " by the prefetcher), %" PRIu64
           " stalls (%.3f ms), %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
           " resident bytes (peak %" PRIu64 "), %" PRIu64 " bytes read\n",
           stats.page_loads, stats.prefetch_loads, stats.stalls,
           (double)stats.stall_ns / 1e6, stats.hits, stats.misses,
           stats.resident_bytes, stats.peak_resident_bytes, stats.bytes_read);

    /* Misuse is refused, not a crash. */
    int bad = 0;
    bad |= expect_refused("NULL out array",
                          cs_stream_sample(stream, 0.0, NULL, bones, NULL, 0, &quality),
                          CS_STATUS_NULL);
    bad |= expect_refused("short out array",
                          cs_stream_sample(stream, 0.0, pose, bones - 1, NULL, 0, &quality),
                          CS_STATUS_BUFFER_TOO_SMALL);
    bad |= expect_refused("player passed as a stream",
                          cs_stream_info((const CsStream *)player, &info),
                          CS_STATUS_WRONG_HANDLE_TYPE);
    CHECK(cs_player_free(player));
    bad |= expect_refused("player freed twice", cs_player_free(player),
                          CS_STATUS_INVALID_HANDLE);
    CHECK(cs_stream_free(stream));
    bad |= expect_refused("freed stream sampled",
                          cs_stream_sample(stream, 0.0, pose, bones, NULL, 0, &quality),
                          CS_STATUS_INVALID_HANDLE);
    bad |= expect_refused("missing file",
                          cs_stream_open_file("/nonexistent/clip.cine", &options, &stream),
                          CS_STATUS_IO);
    if (cs_live_handles() != 0) {
        fprintf(stderr, "%zu handles still live\n", cs_live_handles());
        bad = 1;
    }
    free(parents);
    free(pose);
    free(remapped);
    free(remap);
    return bad;
}
