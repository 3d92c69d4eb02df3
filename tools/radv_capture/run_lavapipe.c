/* run_lavapipe: the application radv_capture records (vkapp.h), run on lavapipe (Mesa's CPU
 * Vulkan driver, Debian mesa-vulkan-drivers), with the same options. It writes what the app
 * reads back: OUTDIR/setS_bindingB.bin for every binding (a buffer's or texel buffer's bytes
 * after the dispatch; an image's read-back buffer, filled by vkCmdCopyImageToBuffer).
 * --subgroup-size, --ib-dw and --num-cu are accepted and ignored (lavapipe's subgroups are its
 * own; the shaders the tests run do not depend on the subgroup size).
 *
 * build: gcc -O1 tools/radv_capture/run_lavapipe.c -o run_lavapipe -ldl   (needs the Vulkan
 * headers, Debian libvulkan-dev; no Vulkan loader: libvulkan_lvp.so is opened directly) */
#define _GNU_SOURCE
#include "vkapp.h"

#define LVP_LIB "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"

static void
lvp_results(const char *dir, const struct binding *b, unsigned nb, void **maps,
            const uint64_t *sizes, uint32_t qfi, int graphics)
{
   for (unsigned i = 0; i < nb; i++) {
      char path[4200];
      snprintf(path, sizeof(path), "%s/set%u_binding%u.bin", dir, b[i].set, b[i].binding);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(maps[i], 1, sizes[i], f) != sizes[i] || fclose(f)) {
         perror(path);
         exit(1);
      }
   }
}

int
main(int argc, char **argv)
{
   static const struct app_hooks hooks = {.name = "run_lavapipe",
                                          .lib = LVP_LIB,
                                          .use_subgroup_size = 0,
                                          .results = lvp_results};
   return app_main(argc, argv, &hooks);
}
