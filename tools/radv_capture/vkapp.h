/* vkapp.h: the Vulkan application that radv_capture records and that run_lavapipe runs on
 * lavapipe, written once so both drivers see the same calls on the same data (README.md).
 *
 * A compute app: one SPIR-V compute shader, its descriptors (storage/uniform buffers, storage
 * images, combined image samplers, uniform/storage texel buffers), push constants, one dispatch
 * (and optionally the same dispatch indirect). Images are filled the way a game fills them:
 * a staging buffer copied in with vkCmdCopyBufferToImage, and every image is read back after the
 * dispatch with vkCmdCopyImageToBuffer, in the same command buffer, with the barriers and layout
 * transitions a real app records (UNDEFINED -> TRANSFER_DST -> GENERAL / SHADER_READ_ONLY ->
 * TRANSFER_SRC). Without images or texel buffers the calls are exactly those radv_capture made
 * before images existed (its older captures stay byte for byte).
 *
 * The including program gives the driver (struct app_hooks) and defines nothing else this needs.
 */
#ifndef VKAPP_H
#define VKAPP_H

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <vulkan/vulkan.h>

#define APP_CHECK(x)                                                                        \
   do {                                                                                     \
      VkResult r_ = (x);                                                                    \
      if (r_ != VK_SUCCESS) {                                                               \
         fprintf(stderr, "%s: %s failed: VkResult %d\n", app_name, #x, (int)r_);            \
         exit(1);                                                                           \
      }                                                                                     \
   } while (0)

static const char *app_name = "vkapp";

#define MAX_BINDINGS 64

enum app_kind { K_SSBO, K_UBO, K_STORAGE_IMAGE, K_SAMPLED_IMAGE, K_UNIFORM_TEXEL, K_STORAGE_TEXEL };

struct binding {
   unsigned set, binding, bytes;
   VkDescriptorType type;
   const char *file;
   enum app_kind kind;
   /* images: format, texel bytes, view type, extent, layers; texel buffers: format */
   unsigned format, texel_bytes, w, h, d, layers;
   unsigned levels; /* mip levels (--mips; 1 without it) */
   VkImageViewType view;
   int has_sampler;
   int attachment; /* rendertarget: a storage image that is also a colour attachment */
   unsigned mag, min, mip, au, av, aw;
   /* --border: the sampler's VkBorderColor (default FLOAT_TRANSPARENT_BLACK) and, for the
    * VK_BORDER_COLOR_*_CUSTOM_EXT ones, the VkClearColorValue's four dwords */
   unsigned border;
   uint32_t border_words[4];
};

/* What differs between the drivers. */
struct app_hooks {
   const char *name;
   const char *lib;          /* the driver's ICD library */
   int use_subgroup_size;    /* pass VkPipelineShaderStageRequiredSubgroupSizeCreateInfo */
   /* after vkEnumeratePhysicalDevices, before vkCreateDevice; want_compute: the app needs a
    * compute-only queue family */
   void (*physical_device)(VkInstance inst, VkPhysicalDevice pd, PFN_vkGetInstanceProcAddr gipa,
                           int want_compute);
   /* the VA and id of the memory object allocated last (radv); NULL: none recorded */
   int (*last_alloc)(uint64_t *va, unsigned *id);
   /* after vkQueueWaitIdle: mapped bytes of every binding's result (buffers, texel buffers, the
    * images' read-back buffers) */
   void (*results)(const char *out_dir, const struct binding *b, unsigned nb, void **maps,
                   const uint64_t *sizes, uint32_t qfi, int graphics);
};

/* app options the driver side reads */
static unsigned app_ib_dw = 8192, app_num_cu = 80;
/* --gb-addr-config: the GB_ADDR_CONFIG the kernel would report (radv only; 0 = the null
 * winsys's own 0) */
static unsigned app_gb_addr_config;
static int app_gb_addr_config_set;
/* a --border gave a custom border colour: the device enables VK_EXT_custom_border_color */
static int app_custom_border;

static void *
read_all(const char *path, size_t *size)
{
   FILE *f = fopen(path, "rb");
   if (!f) {
      perror(path);
      exit(2);
   }
   fseek(f, 0, SEEK_END);
   long n = ftell(f);
   fseek(f, 0, SEEK_SET);
   void *buf = malloc(n > 0 ? n : 1);
   if (!buf || (n > 0 && fread(buf, 1, n, f) != (size_t)n)) {
      perror(path);
      exit(2);
   }
   fclose(f);
   *size = n;
   return buf;
}

static void
usage(const char *msg)
{
   fprintf(stderr, "%s: %s\nusage: %s SHADER.spv OUTDIR [--binding SET:BINDING:ssbo|ubo:BYTES[:FILE]]...\n"
                   "       [--image SET:BINDING:storage|rendertarget|sampled:VKFORMAT:TEXELBYTES:VIEW:W:H:D:LAYERS[:FILE]]...\n"
                   "       [--mips SET:BINDING:LEVELS]... [--gb-addr-config VALUE]\n"
                   "       [--sampler SET:BINDING:MAG:MIN:MIPMAP:ADDRU:ADDRV:ADDRW]...\n"
                   "       [--border SET:BINDING:VKBORDERCOLOR[:W0,W1,W2,W3]]...\n"
                   "       [--texel SET:BINDING:uniform|storage:VKFORMAT:BYTES[:FILE]]...\n"
                   "       [--push FILE | --push-u32 A,B,...] [--groups X,Y,Z] [--indirect]\n"
                   "       [--subgroup-size 32|64] [--ib-dw N] [--num-cu N] [--entry NAME]\n",
           app_name, msg, app_name);
   exit(2);
}

/* a new buffer's bytes: `data`, else FILE's first bytes, else zeros */
static void
fill(void *mapped, uint64_t bytes, const char *file, const void *data, size_t ndata)
{
   if (data) {
      memcpy(mapped, data, ndata);
   } else if (file) {
      size_t fn;
      void *d = read_all(file, &fn);
      memcpy(mapped, d, fn < bytes ? fn : bytes);
      free(d);
   }
}

static VkImageViewType
view_type(const char *s)
{
   if (!strcmp(s, "1d"))
      return VK_IMAGE_VIEW_TYPE_1D;
   if (!strcmp(s, "2d"))
      return VK_IMAGE_VIEW_TYPE_2D;
   if (!strcmp(s, "3d"))
      return VK_IMAGE_VIEW_TYPE_3D;
   if (!strcmp(s, "1darray"))
      return VK_IMAGE_VIEW_TYPE_1D_ARRAY;
   if (!strcmp(s, "2darray"))
      return VK_IMAGE_VIEW_TYPE_2D_ARRAY;
   if (!strcmp(s, "cube"))
      return VK_IMAGE_VIEW_TYPE_CUBE;
   if (!strcmp(s, "cubearray"))
      return VK_IMAGE_VIEW_TYPE_CUBE_ARRAY;
   usage("image VIEW must be 1d, 2d, 3d, 1darray, 2darray, cube or cubearray");
   return 0;
}

static VkImageType
image_type(VkImageViewType v)
{
   return v == VK_IMAGE_VIEW_TYPE_1D || v == VK_IMAGE_VIEW_TYPE_1D_ARRAY ? VK_IMAGE_TYPE_1D
          : v == VK_IMAGE_VIEW_TYPE_3D                                   ? VK_IMAGE_TYPE_3D
                                                                         : VK_IMAGE_TYPE_2D;
}

static int
is_image(const struct binding *b)
{
   return b->kind == K_STORAGE_IMAGE || b->kind == K_SAMPLED_IMAGE;
}

static unsigned
mip_size(unsigned n, unsigned level)
{
   return n >> level ? n >> level : 1;
}

/* bytes of one mip level, every layer, tightly packed (the staging/read-back layout: levels in
 * order, each level's layers or slices in order) */
static uint64_t
level_bytes(const struct binding *b, unsigned level)
{
   return (uint64_t)b->texel_bytes * mip_size(b->w, level) * mip_size(b->h, level) *
          mip_size(b->d, level) * b->layers;
}

static uint64_t
image_bytes(const struct binding *b)
{
   uint64_t n = 0;
   for (unsigned l = 0; l < b->levels; l++)
      n += level_bytes(b, l);
   return n;
}

static void
image_barrier(PFN_vkCmdPipelineBarrier vkCmdPipelineBarrier, VkCommandBuffer cb, VkImage *imgs,
              const struct binding *bindings, unsigned nb, VkPipelineStageFlags src_stage,
              VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access,
              int from, int to)
{
   /* from/to: a VkImageLayout, or -1 for the binding's shader layout */
   VkImageMemoryBarrier bar[MAX_BINDINGS];
   unsigned n = 0;
   for (unsigned b = 0; b < nb; b++) {
      if (!is_image(&bindings[b]))
         continue;
      VkImageLayout shader = bindings[b].kind == K_STORAGE_IMAGE
                                ? VK_IMAGE_LAYOUT_GENERAL
                                : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
      bar[n++] = (VkImageMemoryBarrier){
         .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
         .srcAccessMask = src_access,
         .dstAccessMask = dst_access,
         .oldLayout = from < 0 ? shader : (VkImageLayout)from,
         .newLayout = to < 0 ? shader : (VkImageLayout)to,
         .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
         .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
         .image = imgs[b],
         .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, bindings[b].levels, 0, bindings[b].layers}};
   }
   vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, n, bar);
}

/* the copy regions between an image and its staging / read-back buffer: one per mip level
 * (every layer), the buffer tightly packed, levels in order */
static unsigned
copy_regions(const struct binding *b, VkBufferImageCopy *r)
{
   uint64_t off = 0;
   for (unsigned l = 0; l < b->levels; l++) {
      r[l] = (VkBufferImageCopy){.bufferOffset = off,
                                 .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, l, 0, b->layers},
                                 .imageExtent = {mip_size(b->w, l), mip_size(b->h, l), mip_size(b->d, l)}};
      off += level_bytes(b, l);
   }
   return b->levels;
}

#define IPROC(inst, name) PFN_##name name = (PFN_##name)gipa(inst, #name)
#define DPROC(dev, name) PFN_##name name = (PFN_##name)gdpa(dev, #name)

static int
app_main(int argc, char **argv, const struct app_hooks *hooks)
{
   app_name = hooks->name;
   if (argc < 3)
      usage("need SHADER.spv and OUTDIR");
   const char *spv_path = argv[1];
   const char *out_dir = argv[2];
   static struct binding bindings[MAX_BINDINGS];
   unsigned nb = 0;
   uint8_t push[256];
   unsigned push_size = 0;
   unsigned gx = 1, gy = 1, gz = 1, subgroup = 0;
   int indirect = 0;
   const char *entry = "main";

   for (int i = 3; i < argc; i++) {
      const char *a = argv[i];
      const char *v = i + 1 < argc ? argv[i + 1] : NULL;
      if (!strcmp(a, "--binding") && v) {
         if (nb == MAX_BINDINGS)
            usage("too many bindings");
         struct binding *b = &bindings[nb++];
         char type[32] = {0};
         int pos = 0;
         if (sscanf(v, "%u:%u:%31[a-z]:%u%n", &b->set, &b->binding, type, &b->bytes, &pos) != 4)
            usage("bad --binding");
         b->file = v[pos] == ':' ? v + pos + 1 : NULL;
         if (!strcmp(type, "ssbo")) {
            b->type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            b->kind = K_SSBO;
         } else if (!strcmp(type, "ubo")) {
            b->type = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
            b->kind = K_UBO;
         } else
            usage("binding TYPE must be ssbo or ubo");
         if (b->set >= 8 || !b->bytes)
            usage("bad --binding set or size");
         i++;
      } else if (!strcmp(a, "--image") && v) {
         if (nb == MAX_BINDINGS)
            usage("too many bindings");
         struct binding *b = &bindings[nb++];
         char kind[32] = {0}, view[32] = {0};
         int pos = 0;
         if (sscanf(v, "%u:%u:%31[a-z]:%u:%u:%31[a-z0-9]:%u:%u:%u:%u%n", &b->set, &b->binding, kind,
                    &b->format, &b->texel_bytes, view, &b->w, &b->h, &b->d, &b->layers, &pos) != 10)
            usage("bad --image");
         b->file = v[pos] == ':' ? v + pos + 1 : NULL;
         if (!strcmp(kind, "storage") || !strcmp(kind, "rendertarget")) {
            b->kind = K_STORAGE_IMAGE;
            b->type = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
            b->attachment = !strcmp(kind, "rendertarget");
         } else if (!strcmp(kind, "sampled")) {
            b->kind = K_SAMPLED_IMAGE;
            b->type = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
         } else
            usage("image KIND must be storage, rendertarget or sampled");
         b->view = view_type(view);
         b->levels = 1;
         int cube = b->view == VK_IMAGE_VIEW_TYPE_CUBE || b->view == VK_IMAGE_VIEW_TYPE_CUBE_ARRAY;
         if ((cube && (b->w != b->h || b->layers % 6 ||
                       (b->view == VK_IMAGE_VIEW_TYPE_CUBE && b->layers != 6))) ||
             b->set >= 8 || !b->format || !b->texel_bytes || b->texel_bytes > 16 || !b->w ||
             !b->h || !b->d || !b->layers || image_bytes(b) > (256u << 20) ||
             (image_type(b->view) != VK_IMAGE_TYPE_3D && b->d != 1) ||
             (image_type(b->view) == VK_IMAGE_TYPE_1D && b->h != 1) ||
             ((b->view == VK_IMAGE_VIEW_TYPE_1D || b->view == VK_IMAGE_VIEW_TYPE_2D ||
               b->view == VK_IMAGE_VIEW_TYPE_3D) && b->layers != 1))
            usage("bad --image set, format or extent");
         b->bytes = (unsigned)image_bytes(b);
         i++;
      } else if (!strcmp(a, "--mips") && v) {
         unsigned s, bi, levels;
         if (sscanf(v, "%u:%u:%u", &s, &bi, &levels) != 3)
            usage("bad --mips");
         struct binding *b = NULL;
         for (unsigned k = 0; k < nb; k++)
            if (bindings[k].set == s && bindings[k].binding == bi && is_image(&bindings[k]))
               b = &bindings[k];
         if (!b)
            usage("--mips names no --image given before it");
         unsigned big = b->w > b->h ? b->w : b->h;
         big = big > b->d ? big : b->d;
         unsigned full = 1;
         while (big >> full)
            full++;
         if (!levels || levels > full)
            usage("--mips LEVELS must be 1 .. log2(largest extent) + 1");
         b->levels = levels;
         if (image_bytes(b) > (256u << 20))
            usage("image too large");
         b->bytes = (unsigned)image_bytes(b);
         i++;
      } else if (!strcmp(a, "--gb-addr-config") && v) {
         app_gb_addr_config = strtoul(v, NULL, 0);
         app_gb_addr_config_set = 1;
         i++;
      } else if (!strcmp(a, "--sampler") && v) {
         unsigned s, bi, f[6];
         if (sscanf(v, "%u:%u:%u:%u:%u:%u:%u:%u", &s, &bi, &f[0], &f[1], &f[2], &f[3], &f[4],
                    &f[5]) != 8)
            usage("bad --sampler");
         struct binding *b = NULL;
         for (unsigned k = 0; k < nb; k++)
            if (bindings[k].set == s && bindings[k].binding == bi && bindings[k].kind == K_SAMPLED_IMAGE)
               b = &bindings[k];
         if (!b)
            usage("--sampler names no sampled --image given before it");
         b->has_sampler = 1;
         b->mag = f[0], b->min = f[1], b->mip = f[2], b->au = f[3], b->av = f[4], b->aw = f[5];
         i++;
      } else if (!strcmp(a, "--border") && v) {
         /* the sampler's borderColor (a VkBorderColor by number); the custom ones
          * (1000287003 FLOAT_CUSTOM_EXT, 1000287004 INT_CUSTOM_EXT) take the colour's four
          * dwords (hex), which go into VkSamplerCustomBorderColorCreateInfoEXT as they are */
         unsigned s, bi, bc, w[4] = {0, 0, 0, 0};
         int n = sscanf(v, "%u:%u:%u:%x,%x,%x,%x", &s, &bi, &bc, &w[0], &w[1], &w[2], &w[3]);
         int custom = bc == VK_BORDER_COLOR_FLOAT_CUSTOM_EXT || bc == VK_BORDER_COLOR_INT_CUSTOM_EXT;
         if (n != (custom ? 7 : 3))
            usage("bad --border");
         struct binding *b = NULL;
         for (unsigned k = 0; k < nb; k++)
            if (bindings[k].set == s && bindings[k].binding == bi && bindings[k].has_sampler)
               b = &bindings[k];
         if (!b)
            usage("--border names no --sampler given before it");
         b->border = bc;
         memcpy(b->border_words, w, sizeof(w));
         app_custom_border |= custom;
         i++;
      } else if (!strcmp(a, "--texel") && v) {
         if (nb == MAX_BINDINGS)
            usage("too many bindings");
         struct binding *b = &bindings[nb++];
         char kind[32] = {0};
         int pos = 0;
         if (sscanf(v, "%u:%u:%31[a-z]:%u:%u%n", &b->set, &b->binding, kind, &b->format, &b->bytes,
                    &pos) != 5)
            usage("bad --texel");
         b->file = v[pos] == ':' ? v + pos + 1 : NULL;
         if (!strcmp(kind, "uniform")) {
            b->kind = K_UNIFORM_TEXEL;
            b->type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
         } else if (!strcmp(kind, "storage")) {
            b->kind = K_STORAGE_TEXEL;
            b->type = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
         } else
            usage("texel KIND must be uniform or storage");
         if (b->set >= 8 || !b->bytes || !b->format)
            usage("bad --texel set, format or size");
         i++;
      } else if (!strcmp(a, "--push") && v) {
         size_t n;
         void *d = read_all(v, &n);
         if (n > sizeof(push) || n % 4)
            usage("push constants: at most 256 bytes, a multiple of 4");
         memcpy(push, d, n);
         push_size = n;
         i++;
      } else if (!strcmp(a, "--push-u32") && v) {
         char *s = strdup(v), *t, *save;
         for (t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (push_size >= sizeof(push))
               usage("too many push constants");
            uint32_t w = strtoul(t, NULL, 0);
            memcpy(push + push_size, &w, 4);
            push_size += 4;
         }
         i++;
      } else if (!strcmp(a, "--groups") && v) {
         if (sscanf(v, "%u,%u,%u", &gx, &gy, &gz) != 3)
            usage("bad --groups");
         i++;
      } else if (!strcmp(a, "--indirect")) {
         indirect = 1;
      } else if (!strcmp(a, "--subgroup-size") && v) {
         subgroup = atoi(v);
         if (subgroup != 32 && subgroup != 64)
            usage("bad --subgroup-size");
         i++;
      } else if (!strcmp(a, "--ib-dw") && v) {
         app_ib_dw = atoi(v);
         if (app_ib_dw < 1024)
            usage("--ib-dw must be at least 1024");
         i++;
      } else if (!strcmp(a, "--num-cu") && v) {
         app_num_cu = atoi(v);
         i++;
      } else if (!strcmp(a, "--entry") && v) {
         entry = v;
         i++;
      } else {
         usage(a);
      }
   }
   /* images or texel buffers: the "image app" (compute queue, uploads, barriers, read-backs);
    * without them every call is the buffer-only app's */
   int nimg = 0, ntexel = 0;
   for (unsigned b = 0; b < nb; b++) {
      nimg += is_image(&bindings[b]);
      ntexel += bindings[b].kind == K_UNIFORM_TEXEL || bindings[b].kind == K_STORAGE_TEXEL;
      if (bindings[b].kind == K_SAMPLED_IMAGE && !bindings[b].has_sampler)
         usage("a sampled --image needs a --sampler");
   }
   int image_app = nimg + ntexel > 0;
   if (mkdir(out_dir, 0777) && errno != EEXIST) {
      perror(out_dir);
      return 1;
   }

   void *lib = dlopen(hooks->lib, RTLD_NOW | RTLD_LOCAL);
   if (!lib) {
      fprintf(stderr, "%s: %s\n", app_name, dlerror());
      return 1;
   }
   PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vk_icdGetInstanceProcAddr");
   if (!gipa) {
      fprintf(stderr, "%s: no vk_icdGetInstanceProcAddr in %s\n", app_name, hooks->lib);
      return 1;
   }

   IPROC(NULL, vkCreateInstance);
   VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = "radv_capture",
                            .apiVersion = VK_API_VERSION_1_3};
   VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
   VkInstance inst;
   APP_CHECK(vkCreateInstance(&ici, NULL, &inst));
   IPROC(inst, vkEnumeratePhysicalDevices);
   IPROC(inst, vkGetPhysicalDeviceProperties);
   IPROC(inst, vkGetPhysicalDeviceQueueFamilyProperties);
   IPROC(inst, vkGetPhysicalDeviceMemoryProperties);
   IPROC(inst, vkCreateDevice);
   PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");

   uint32_t n = 1;
   VkPhysicalDevice pd;
   VkResult er = vkEnumeratePhysicalDevices(inst, &n, &pd);
   if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || n < 1) {
      fprintf(stderr, "%s: no physical device (RADV: set RADV_FORCE_FAMILY)\n", app_name);
      return 1;
   }
   VkPhysicalDeviceProperties props;
   vkGetPhysicalDeviceProperties(pd, &props);
   fprintf(stderr, "%s: device: %s\n", app_name, props.deviceName);
   if (hooks->physical_device)
      hooks->physical_device(inst, pd, gipa, image_app);

   uint32_t nqf = 8;
   VkQueueFamilyProperties qfp[8];
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nqf, qfp);
   uint32_t qfi = UINT32_MAX;
   for (uint32_t q = 0; q < nqf; q++) /* prefer a compute-only family if the driver exposes one */
      if ((qfp[q].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
          (qfi == UINT32_MAX || !(qfp[q].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
         qfi = q;
   if (qfi == UINT32_MAX) {
      fprintf(stderr, "%s: no compute queue family\n", app_name);
      return 1;
   }

   float prio = 1.0f;
   VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = qfi,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
   VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                           .subgroupSizeControl = subgroup != 0 && hooks->use_subgroup_size};
   /* custom border colours (--border): the extension and its features, only then (RADV
    * allocates its border-colour table and writes TA_CS_BC_BASE_ADDR only when the feature
    * is enabled, so other command lines give the same capture as before) */
   VkPhysicalDeviceCustomBorderColorFeaturesEXT fbc = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CUSTOM_BORDER_COLOR_FEATURES_EXT,
      .customBorderColors = VK_TRUE,
      .customBorderColorWithoutFormat = VK_TRUE};
   static const char *const bc_ext[] = {VK_EXT_CUSTOM_BORDER_COLOR_EXTENSION_NAME};
   if (app_custom_border)
      f13.pNext = &fbc;
   VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f13,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qci,
                             .enabledExtensionCount = app_custom_border ? 1 : 0,
                             .ppEnabledExtensionNames = app_custom_border ? bc_ext : NULL};
   VkDevice dev;
   APP_CHECK(vkCreateDevice(pd, &dci, NULL, &dev));

   DPROC(dev, vkGetDeviceQueue);
   DPROC(dev, vkCreateShaderModule);
   DPROC(dev, vkCreateDescriptorSetLayout);
   DPROC(dev, vkCreatePipelineLayout);
   DPROC(dev, vkCreateComputePipelines);
   DPROC(dev, vkCreateBuffer);
   DPROC(dev, vkGetBufferMemoryRequirements);
   DPROC(dev, vkAllocateMemory);
   DPROC(dev, vkBindBufferMemory);
   DPROC(dev, vkMapMemory);
   DPROC(dev, vkCreateDescriptorPool);
   DPROC(dev, vkAllocateDescriptorSets);
   DPROC(dev, vkUpdateDescriptorSets);
   DPROC(dev, vkCreateCommandPool);
   DPROC(dev, vkAllocateCommandBuffers);
   DPROC(dev, vkBeginCommandBuffer);
   DPROC(dev, vkEndCommandBuffer);
   DPROC(dev, vkCmdBindPipeline);
   DPROC(dev, vkCmdBindDescriptorSets);
   DPROC(dev, vkCmdPushConstants);
   DPROC(dev, vkCmdDispatch);
   DPROC(dev, vkCmdDispatchIndirect);
   DPROC(dev, vkQueueSubmit);
   DPROC(dev, vkQueueWaitIdle);
   DPROC(dev, vkCreateImage);
   DPROC(dev, vkGetImageMemoryRequirements);
   DPROC(dev, vkBindImageMemory);
   DPROC(dev, vkCreateImageView);
   DPROC(dev, vkCreateSampler);
   DPROC(dev, vkCreateBufferView);
   DPROC(dev, vkCmdPipelineBarrier);
   DPROC(dev, vkCmdCopyBufferToImage);
   DPROC(dev, vkCmdCopyImageToBuffer);

   VkQueue queue;
   vkGetDeviceQueue(dev, qfi, 0, &queue);

   size_t spv_size;
   void *spv = read_all(spv_path, &spv_size);
   VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = spv_size,
                                    .pCode = spv};
   VkShaderModule sm;
   APP_CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));

   /* descriptor set layouts: sets 0..max used */
   unsigned nsets = 0;
   for (unsigned b = 0; b < nb; b++)
      if (bindings[b].set + 1 > nsets)
         nsets = bindings[b].set + 1;
   VkDescriptorSetLayout dsl[8];
   for (unsigned s = 0; s < nsets; s++) {
      VkDescriptorSetLayoutBinding lb[MAX_BINDINGS];
      unsigned k = 0;
      for (unsigned b = 0; b < nb; b++)
         if (bindings[b].set == s)
            lb[k++] = (VkDescriptorSetLayoutBinding){.binding = bindings[b].binding,
                                                     .descriptorType = bindings[b].type,
                                                     .descriptorCount = 1,
                                                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
      VkDescriptorSetLayoutCreateInfo c = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = k,
                                           .pBindings = lb};
      APP_CHECK(vkCreateDescriptorSetLayout(dev, &c, NULL, &dsl[s]));
   }
   VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_size};
   VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = nsets,
                                      .pSetLayouts = dsl,
                                      .pushConstantRangeCount = push_size ? 1 : 0,
                                      .pPushConstantRanges = &pcr};
   VkPipelineLayout pl;
   APP_CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));

   VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = subgroup};
   VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .pNext = subgroup && hooks->use_subgroup_size ? &rss : NULL,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = entry},
      .layout = pl};
   VkPipeline pipe;
   APP_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));

   /* memory: one host-visible allocation per buffer (and per image, staging and read-back
    * buffer) */
   VkPhysicalDeviceMemoryProperties mp;
   vkGetPhysicalDeviceMemoryProperties(pd, &mp);
#define PICK_TYPE(bits, out)                                                                  \
   do {                                                                                       \
      out = UINT32_MAX;                                                                       \
      for (uint32_t t = 0; t < mp.memoryTypeCount; t++)                                       \
         if (((bits) & (1u << t)) &&                                                          \
             (mp.memoryTypes[t].propertyFlags & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |         \
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==     \
                (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) { \
            out = t;                                                                          \
            break;                                                                            \
         }                                                                                    \
      if (out == UINT32_MAX) {                                                                \
         fprintf(stderr, "%s: no host-visible memory type\n", app_name);                       \
         exit(1);                                                                             \
      }                                                                                       \
   } while (0)
   static VkBuffer bufs[MAX_BINDINGS + 1], staging[MAX_BINDINGS], readback[MAX_BINDINGS];
   static VkImage imgs[MAX_BINDINGS];
   static VkImageView views[MAX_BINDINGS];
   static VkBufferView bviews[MAX_BINDINGS];
   static VkSampler samplers[MAX_BINDINGS];
   static void *maps[MAX_BINDINGS];
   static uint64_t sizes[MAX_BINDINGS];
   FILE *m = NULL;
   {
      char path[4200];
      snprintf(path, sizeof(path), "%s/buffers.txt", out_dir);
      m = fopen(path, "w");
      if (!m) {
         perror(path);
         return 1;
      }
   }
   /* a host-visible buffer of `bytes`, filled from `file` (or `data`); returns its mapping */
#define MAKE_BUFFER(out, bytes, usage_, file, data, ndata, mapped)                           \
   do {                                                                                      \
      VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,                \
                                .size = (bytes),                                             \
                                .usage = (usage_)};                                          \
      APP_CHECK(vkCreateBuffer(dev, &bci, NULL, &(out)));                                    \
      VkMemoryRequirements mr;                                                               \
      vkGetBufferMemoryRequirements(dev, (out), &mr);                                        \
      uint32_t type;                                                                         \
      PICK_TYPE(mr.memoryTypeBits, type);                                                    \
      VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,            \
                                  .allocationSize = mr.size,                                 \
                                  .memoryTypeIndex = type};                                  \
      VkDeviceMemory mem;                                                                    \
      APP_CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));                                    \
      APP_CHECK(vkBindBufferMemory(dev, (out), mem, 0));                                     \
      APP_CHECK(vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, &(mapped)));                      \
      fill((mapped), (bytes), (file), (data), (ndata));                                      \
   } while (0)
   uint64_t va;
   unsigned bo_id;
   for (unsigned b = 0; b <= nb; b++) {
      int is_ind = b == nb;
      if (is_ind && !indirect)
         break;
      void *p;
      if (is_ind) {
         uint32_t g[3] = {gx, gy, gz};
         MAKE_BUFFER(bufs[b], 12, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, (const char *)NULL, g, 12, p);
         if (hooks->last_alloc && hooks->last_alloc(&va, &bo_id))
            fprintf(m, "indirect va=0x%016llx size=%llu bo=%u\n", (unsigned long long)va, 12ull, bo_id);
         continue;
      }
      struct binding *bd = &bindings[b];
      if (bd->kind == K_SSBO || bd->kind == K_UBO) {
         MAKE_BUFFER(bufs[b], bd->bytes,
                     bd->kind == K_SSBO ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
                                        : VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                     bd->file, (const void *)NULL, 0, p);
         maps[b] = p;
         sizes[b] = bd->bytes;
         /* the VA of this buffer is that of the BO just allocated (newest BO) */
         if (hooks->last_alloc && hooks->last_alloc(&va, &bo_id))
            fprintf(m, "set=%u binding=%u type=%s va=0x%016llx size=%llu bo=%u\n", bd->set,
                    bd->binding, bd->kind == K_SSBO ? "ssbo" : "ubo", (unsigned long long)va,
                    (unsigned long long)bd->bytes, bo_id);
      } else if (!is_image(bd)) { /* texel buffer */
         MAKE_BUFFER(bufs[b], bd->bytes,
                     bd->kind == K_UNIFORM_TEXEL ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT
                                                 : VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT,
                     bd->file, (const void *)NULL, 0, p);
         maps[b] = p;
         sizes[b] = bd->bytes;
         VkBufferViewCreateInfo bv = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                      .buffer = bufs[b],
                                      .format = bd->format,
                                      .offset = 0,
                                      .range = VK_WHOLE_SIZE};
         APP_CHECK(vkCreateBufferView(dev, &bv, NULL, &bviews[b]));
         if (hooks->last_alloc && hooks->last_alloc(&va, &bo_id))
            fprintf(m, "set=%u binding=%u type=%s_texel format=%u va=0x%016llx size=%llu bo=%u\n",
                    bd->set, bd->binding, bd->kind == K_UNIFORM_TEXEL ? "uniform" : "storage",
                    bd->format, (unsigned long long)va, (unsigned long long)bd->bytes, bo_id);
      } else { /* image: the image, its staging buffer and its read-back buffer */
         uint64_t bytes = image_bytes(bd);
         VkImageCreateInfo ic = {
            .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
            /* a cube view needs a cube-compatible 2-D image */
            .flags = bd->view == VK_IMAGE_VIEW_TYPE_CUBE || bd->view == VK_IMAGE_VIEW_TYPE_CUBE_ARRAY
                        ? VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT
                        : 0,
            .imageType = image_type(bd->view),
            .format = bd->format,
            .extent = {bd->w, bd->h, bd->d},
            .mipLevels = bd->levels,
            .arrayLayers = bd->layers,
            .samples = VK_SAMPLE_COUNT_1_BIT,
            .tiling = VK_IMAGE_TILING_OPTIMAL,
            /* what a compute-only app asks for: the shader's use, and the two copies */
            .usage = (bd->kind == K_STORAGE_IMAGE ? VK_IMAGE_USAGE_STORAGE_BIT
                                                  : VK_IMAGE_USAGE_SAMPLED_BIT) |
                     VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                     /* a render target a compute pass also writes (RADV may compress it) */
                     (bd->attachment ? VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT : 0),
            .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
            .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
         APP_CHECK(vkCreateImage(dev, &ic, NULL, &imgs[b]));
         VkMemoryRequirements mr;
         vkGetImageMemoryRequirements(dev, imgs[b], &mr);
         uint32_t type;
         PICK_TYPE(mr.memoryTypeBits, type);
         VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                     .allocationSize = mr.size,
                                     .memoryTypeIndex = type};
         VkDeviceMemory mem;
         APP_CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
         APP_CHECK(vkBindImageMemory(dev, imgs[b], mem, 0));
         uint64_t img_va = 0;
         unsigned img_bo = 0;
         int have = hooks->last_alloc && hooks->last_alloc(&img_va, &img_bo);
         VkImageViewCreateInfo vc = {.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
                                     .image = imgs[b],
                                     .viewType = bd->view,
                                     .format = bd->format,
                                     .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, bd->levels, 0, bd->layers}};
         APP_CHECK(vkCreateImageView(dev, &vc, NULL, &views[b]));
         if (bd->kind == K_SAMPLED_IMAGE) {
            VkSamplerCreateInfo sc = {.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO,
                                      .magFilter = bd->mag,
                                      .minFilter = bd->min,
                                      .mipmapMode = bd->mip,
                                      .addressModeU = bd->au,
                                      .addressModeV = bd->av,
                                      .addressModeW = bd->aw,
                                      .maxLod = VK_LOD_CLAMP_NONE,
                                      .borderColor = bd->border};
            VkSamplerCustomBorderColorCreateInfoEXT cbc = {
               .sType = VK_STRUCTURE_TYPE_SAMPLER_CUSTOM_BORDER_COLOR_CREATE_INFO_EXT,
               .format = VK_FORMAT_UNDEFINED};
            memcpy(&cbc.customBorderColor, bd->border_words, sizeof(bd->border_words));
            if (bd->border == VK_BORDER_COLOR_FLOAT_CUSTOM_EXT || bd->border == VK_BORDER_COLOR_INT_CUSTOM_EXT)
               sc.pNext = &cbc;
            APP_CHECK(vkCreateSampler(dev, &sc, NULL, &samplers[b]));
         }
         void *sp;
         MAKE_BUFFER(staging[b], bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, bd->file,
                     (const void *)NULL, 0, sp);
         uint64_t st_va = 0;
         unsigned st_bo = 0;
         if (have)
            hooks->last_alloc(&st_va, &st_bo);
         MAKE_BUFFER(readback[b], bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, (const char *)NULL,
                     (const void *)NULL, 0, maps[b]);
         sizes[b] = bytes;
         uint64_t rb_va = 0;
         unsigned rb_bo = 0;
         if (have) {
            hooks->last_alloc(&rb_va, &rb_bo);
            fprintf(m, "set=%u binding=%u type=%s_image format=%u texel_bytes=%u view=%d "
                       "extent=%u,%u,%u layers=%u va=0x%016llx size=%llu bo=%u "
                       "staging_va=0x%016llx readback_va=0x%016llx bytes=%llu",
                    bd->set, bd->binding,
                    bd->attachment ? "rendertarget" : bd->kind == K_STORAGE_IMAGE ? "storage" : "sampled",
                    bd->format, bd->texel_bytes, (int)bd->view, bd->w, bd->h, bd->d, bd->layers,
                    (unsigned long long)img_va, (unsigned long long)mr.size, img_bo,
                    (unsigned long long)st_va, (unsigned long long)rb_va,
                    (unsigned long long)bytes);
            /* (one-level lines stay as they were before --mips) */
            if (bd->levels > 1)
               fprintf(m, " levels=%u", bd->levels);
            fprintf(m, "\n");
         }
      }
   }
   fprintf(m, "groups=%u,%u,%u indirect=%d push_bytes=%u\n", gx, gy, gz, indirect, push_size);
   fclose(m);

   VkDescriptorSet sets[8] = {0};
   if (nsets) {
      VkDescriptorPoolSize ps[6] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, MAX_BINDINGS}};
      VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                         .maxSets = 8,
                                         .poolSizeCount = image_app ? 6 : 2,
                                         .pPoolSizes = ps};
      VkDescriptorPool dp;
      APP_CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
      VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                          .descriptorPool = dp,
                                          .descriptorSetCount = nsets,
                                          .pSetLayouts = dsl};
      APP_CHECK(vkAllocateDescriptorSets(dev, &dsai, sets));
      for (unsigned b = 0; b < nb; b++) {
         VkDescriptorBufferInfo bi = {.buffer = bufs[b], .offset = 0, .range = VK_WHOLE_SIZE};
         VkDescriptorImageInfo ii = {.sampler = samplers[b],
                                     .imageView = views[b],
                                     .imageLayout = bindings[b].kind == K_STORAGE_IMAGE
                                                       ? VK_IMAGE_LAYOUT_GENERAL
                                                       : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
         VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                   .dstSet = sets[bindings[b].set],
                                   .dstBinding = bindings[b].binding,
                                   .descriptorCount = 1,
                                   .descriptorType = bindings[b].type};
         if (is_image(&bindings[b]))
            w.pImageInfo = &ii;
         else if (bindings[b].kind == K_UNIFORM_TEXEL || bindings[b].kind == K_STORAGE_TEXEL)
            w.pTexelBufferView = &bviews[b];
         else
            w.pBufferInfo = &bi;
         vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
      }
   }

   VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = qfi};
   VkCommandPool pool;
   APP_CHECK(vkCreateCommandPool(dev, &cpi, NULL, &pool));
   VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
   VkCommandBuffer cb;
   APP_CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
   VkCommandBufferBeginInfo cbbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
   APP_CHECK(vkBeginCommandBuffer(cb, &cbbi));
   if (nimg) { /* upload: UNDEFINED -> TRANSFER_DST, copy, -> the shader's layout */
      image_barrier(vkCmdPipelineBarrier, cb, imgs, bindings, nb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                    0, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                    VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
      for (unsigned b = 0; b < nb; b++) {
         if (!is_image(&bindings[b]))
            continue;
         VkBufferImageCopy r[16];
         unsigned nr = copy_regions(&bindings[b], r);
         vkCmdCopyBufferToImage(cb, staging[b], imgs[b], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, nr, r);
      }
      image_barrier(vkCmdPipelineBarrier, cb, imgs, bindings, nb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                    VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, -1);
   }
   vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
   if (nsets)
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, nsets, sets, 0, NULL);
   if (push_size)
      vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
   vkCmdDispatch(cb, gx, gy, gz);
   if (indirect)
      vkCmdDispatchIndirect(cb, bufs[nb], 0);
   if (nimg) { /* read back: the shader's layout -> TRANSFER_SRC, copy out */
      image_barrier(vkCmdPipelineBarrier, cb, imgs, bindings, nb,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT, -1,
                    VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
      for (unsigned b = 0; b < nb; b++) {
         if (!is_image(&bindings[b]))
            continue;
         VkBufferImageCopy r[16];
         unsigned nr = copy_regions(&bindings[b], r);
         vkCmdCopyImageToBuffer(cb, imgs[b], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback[b], nr, r);
      }
   }
   if (image_app) { /* the results to the host */
      VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
   }
   APP_CHECK(vkEndCommandBuffer(cb));

   VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                      .commandBufferCount = 1,
                      .pCommandBuffers = &cb};
   APP_CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
   APP_CHECK(vkQueueWaitIdle(queue));
   if (hooks->results)
      hooks->results(out_dir, bindings, nb, maps, sizes, qfi,
                     !!(qfp[qfi].queueFlags & VK_QUEUE_GRAPHICS_BIT));
   /* leave teardown to process exit: the output is on disk */
   return 0;
}

#endif
