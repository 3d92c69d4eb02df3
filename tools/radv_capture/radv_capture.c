/* radv_capture: record one compute dispatch with Mesa RADV on its null winsys (no AMD GPU) and
 * write out the real PM4 stream RADV builds for it, with every buffer object it points at.
 *
 * Mesa 22.3.6's null winsys (src/amd/vulkan/winsys/null/) can create BOs and pipelines but has no
 * command-stream back end: cs_reset, cs_grow, cs_add_buffer, cs_submit, ... are NULL, and every BO
 * has VA 0. This program loads libvulkan_radeon.so directly (no loader, so the VkPhysicalDevice
 * handle is RADV's own struct radv_physical_device), finds the struct radeon_winsys behind it and,
 * before vkCreateDevice, fills in a small back end of our own:
 *   buffer_create/destroy/map  host memory with distinct GPU VAs, laid out like amdgpu's
 *                              (32-bit BOs at 0xffff8000'xxxxxxxx, the rest above it)
 *   cs_*                       command buffers that live in IB BOs (so they have VAs), chained
 *                              with INDIRECT_BUFFER(CHAIN) packets when RADV asks for more room
 *   cs_submit                  writes the capture: the IBs in submit order (preamble first) and
 *                              every live BO with its VA, size, flags and bytes
 * Everything RADV emits into those IBs (preamble, compute state, descriptors, dispatch) is RADV's.
 * The struct layouts come from the Mesa 22.3.6 source headers at build time (see README.md).
 *
 * usage: radv_capture SHADER.spv OUTDIR [options]
 *   --binding SET:BINDING:TYPE:BYTES[:FILE]  a buffer descriptor; TYPE is ssbo or ubo. The buffer
 *                                            gets BYTES bytes, filled from FILE or with zeros.
 *   --push FILE | --push-u32 A,B,...         push constants (bytes from FILE, or 32-bit words)
 *   --groups X,Y,Z                           vkCmdDispatch size (default 1,1,1)
 *   --indirect                               also record vkCmdDispatchIndirect with the same size
 *   --subgroup-size 32|64                    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo
 *   --ib-dw N                                IB size in dwords (default 8192); small N forces chains
 *   --num-cu N                               rad_info.num_cu (default 80, Navi21; the null
 *                                            winsys leaves 0, which disables the scratch ring)
 *   --entry NAME                             entry point (default main)
 *   --image S:B:storage|rendertarget|sampled:VKFORMAT:TEXELBYTES:VIEW:W:H:D:LAYERS[:FILE]
 *   --sampler S:B:MAG:MIN:MIPMAP:ADDRU:ADDRV:ADDRW
 *   --texel S:B:uniform|storage:VKFORMAT:BYTES[:FILE]
 *                                            images, samplers, texel buffers (README.md,
 *                                            "Images"): uploaded and read back on a compute
 *                                            queue; the application is vkapp.h
 * Exit status: 0 ok, 1 failure, 2 usage error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "radv_radeon_winsys.h" /* Mesa 22.3.6 source: struct radeon_winsys, radeon_cmdbuf, ... */
#include "ac_gpu_info.h"        /* Mesa 22.3.6 source: struct radeon_info */
#include "ac_surface.h"         /* Mesa 22.3.6 source: ac_compute_surface (built in, build.sh) */
#include "addrlib/src/amdgpu_asic_addr.h" /* FAMILY_NV, AMDGPU_NAVI21_RANGE, ... */

#include "vkapp.h" /* the Vulkan application (shared with run_lavapipe.c) */

#define RADV_LIB "/usr/lib/x86_64-linux-gnu/libvulkan_radeon.so"

static unsigned g_gb_addr_config; /* rad_info.gb_addr_config, recorded in capture.json */

/* PM4 type-3 header and the two packets the winsys itself writes (Mesa's sid.h needs generated
 * headers, so these few PM4 facts are spelled out here). */
#define PKT3(op, count, pred) ((3u << 30) | (((count)&0x3fffu) << 16) | (((op)&0xffu) << 8) | ((pred)&1u))
#define PKT3_NOP 0x10
#define PKT3_INDIRECT_BUFFER_CIK 0x3f
#define PKT3_NOP_PAD PKT3(PKT3_NOP, 0x3fff, 0) /* header-only NOP, as amdgpu pads */
/* INDIRECT_BUFFER control dword (Mesa generates S_3F2_* from its register DB). */
#define IB_CONTROL_SIZE(x) ((x)&0xfffff)
#define IB_CONTROL_CHAIN (1u << 20)
#define IB_CONTROL_VALID (1u << 23)

#define CHECK(x)                                                                            \
   do {                                                                                     \
      VkResult r_ = (x);                                                                    \
      if (r_ != VK_SUCCESS) {                                                               \
         fprintf(stderr, "radv_capture: %s failed: VkResult %d\n", #x, (int)r_);            \
         exit(1);                                                                           \
      }                                                                                     \
   } while (0)

static void __attribute__((noreturn))
die(const char *msg)
{
   fprintf(stderr, "radv_capture: %s\n", msg);
   exit(1);
}

/* ---------------------------------------------------------------- BOs ------------------- */

/* The first three members mirror radv_null_winsys_bo (base, ws, ptr), so a BO made by the null
 * winsys before we patched it and one of ours can be mapped the same way. */
struct cap_bo {
   struct radeon_winsys_bo base;
   struct radeon_winsys *ws;
   void *ptr;
   uint64_t size;
   uint32_t id;
   uint32_t flags;
   uint32_t domain;
   int is_ib; /* allocated by our cs code */
   struct cap_bo *next, *prev;
};

static struct cap_bo *bo_list_head;
static uint32_t bo_next_id = 1;
static uint64_t va_next_32bit = 0xffff800000000000ull + 0x00100000ull; /* address32_hi 0xffff8000 */
static uint64_t va_next = 0xffff800100000000ull;
static const char *out_dir;
static unsigned submit_counter;
static void *(*orig_buffer_map)(struct radeon_winsys_bo *bo);
static void (*orig_buffer_destroy)(struct radeon_winsys *ws, struct radeon_winsys_bo *bo);

static uint64_t
va_align(uint64_t v, uint64_t a)
{
   return (v + a - 1) & ~(a - 1);
}

static VkResult
cap_buffer_create(struct radeon_winsys *ws, uint64_t size, unsigned alignment,
                  enum radeon_bo_domain domain, enum radeon_bo_flag flags, unsigned priority,
                  uint64_t address, struct radeon_winsys_bo **out_bo)
{
   *out_bo = NULL;
   if (flags & RADEON_FLAG_VIRTUAL)
      die("sparse (virtual) BOs are not supported");
   struct cap_bo *bo = calloc(1, sizeof(*bo));
   if (!bo)
      return VK_ERROR_OUT_OF_HOST_MEMORY;
   uint64_t alloc = size ? size : 1;
   bo->ptr = calloc(1, alloc); /* the kernel hands out zeroed pages too */
   if (!bo->ptr) {
      free(bo);
      return VK_ERROR_OUT_OF_HOST_MEMORY;
   }
   uint64_t align = alignment > 4096 ? alignment : 4096;
   uint64_t *next = (flags & RADEON_FLAG_32BIT) ? &va_next_32bit : &va_next;
   uint64_t va = address ? address : va_align(*next, align);
   if (!address)
      *next = va + va_align(alloc, 4096) + 4096; /* a guard page between BOs */
   bo->base.va = va;
   bo->base.is_local = !!(domain & RADEON_DOMAIN_VRAM);
   bo->base.vram_no_cpu_access = !!(flags & RADEON_FLAG_NO_CPU_ACCESS);
   bo->base.use_global_list = false;
   bo->base.initial_domain = domain;
   bo->ws = ws;
   bo->size = size;
   bo->id = bo_next_id++;
   bo->flags = flags;
   bo->domain = domain;
   bo->next = bo_list_head;
   if (bo_list_head)
      bo_list_head->prev = bo;
   bo_list_head = bo;
   *out_bo = &bo->base;
   return VK_SUCCESS;
}

static struct cap_bo *
find_bo(struct radeon_winsys_bo *b)
{
   for (struct cap_bo *bo = bo_list_head; bo; bo = bo->next)
      if (&bo->base == b)
         return bo;
   return NULL;
}

static void
cap_buffer_destroy(struct radeon_winsys *ws, struct radeon_winsys_bo *b)
{
   struct cap_bo *bo = find_bo(b);
   if (!bo) { /* made by the null winsys before we took over */
      orig_buffer_destroy(ws, b);
      return;
   }
   if (bo->prev)
      bo->prev->next = bo->next;
   else
      bo_list_head = bo->next;
   if (bo->next)
      bo->next->prev = bo->prev;
   free(bo->ptr);
   free(bo);
}

static void *
cap_buffer_map(struct radeon_winsys_bo *b)
{
   return ((struct cap_bo *)b)->ptr; /* same member offset as radv_null_winsys_bo::ptr */
}

static void
cap_buffer_unmap(struct radeon_winsys_bo *b)
{
}

/* ---------------------------------------------------------------- command streams ------- */

struct cap_cs {
   struct radeon_cmdbuf base;
   struct radeon_winsys *ws;
   enum amd_ip_type ip;
   struct cap_bo *ib;           /* the IB being written; base.buf points into it */
   struct cap_bo **old_ibs;     /* earlier IBs of this cs, each ending in a CHAIN packet */
   unsigned num_old_ibs;
   uint32_t *chain_size_ptr;    /* control dword of the last CHAIN packet, size patched later */
   struct cap_bo *first_ib;     /* where execution of this cs starts */
   unsigned first_ib_dw;        /* size of the first IB once finalized */
   struct radeon_winsys_bo **bos;
   unsigned num_bos, max_bos;
};

static uint32_t
pad_mask(enum amd_ip_type ip)
{
   /* ac_gpu_info.c gives the amdgpu winsys ib_pad_dw_mask 0xff for GFX and compute: IBs are
    * padded with NOPs to a multiple of 256 dwords. The null winsys leaves it 0. */
   return ip == AMD_IP_GFX || ip == AMD_IP_COMPUTE ? 0xff : 0xf;
}

static struct cap_bo *
new_ib(struct radeon_winsys *ws, unsigned dw)
{
   struct radeon_winsys_bo *b;
   if (cap_buffer_create(ws, (uint64_t)dw * 4, 4096, RADEON_DOMAIN_GTT,
                         RADEON_FLAG_CPU_ACCESS | RADEON_FLAG_NO_INTERPROCESS_SHARING |
                            RADEON_FLAG_READ_ONLY | RADEON_FLAG_GTT_WC,
                         RADV_BO_PRIORITY_CS, 0, &b) != VK_SUCCESS)
      die("out of memory for an IB");
   struct cap_bo *bo = (struct cap_bo *)b;
   bo->is_ib = 1;
   return bo;
}

static void
cap_cs_add_buffer(struct radeon_cmdbuf *rcs, struct radeon_winsys_bo *bo)
{
   struct cap_cs *cs = (struct cap_cs *)rcs;
   for (unsigned i = 0; i < cs->num_bos; i++)
      if (cs->bos[i] == bo)
         return;
   if (cs->num_bos == cs->max_bos) {
      cs->max_bos = cs->max_bos ? cs->max_bos * 2 : 64;
      cs->bos = realloc(cs->bos, cs->max_bos * sizeof(*cs->bos));
      if (!cs->bos)
         die("out of memory");
   }
   cs->bos[cs->num_bos++] = bo;
}

/* RADV may fill base.buf up to base.max_dw; we keep 4 + pad dwords back for the chain packet. */
static void
cs_use_ib(struct cap_cs *cs, struct cap_bo *ib)
{
   cs->ib = ib;
   cs->base.buf = ib->ptr;
   cs->base.cdw = 0;
   cs->base.max_dw = ib->size / 4 - 4 - pad_mask(cs->ip);
   cap_cs_add_buffer(&cs->base, &ib->base);
}

static struct radeon_cmdbuf *
cap_cs_create(struct radeon_winsys *ws, enum amd_ip_type ip)
{
   struct cap_cs *cs = calloc(1, sizeof(*cs));
   if (!cs)
      return NULL;
   cs->ws = ws;
   cs->ip = ip;
   cs->first_ib = new_ib(ws, app_ib_dw);
   cs_use_ib(cs, cs->first_ib);
   return &cs->base;
}

static void
cap_cs_reset(struct radeon_cmdbuf *rcs)
{
   struct cap_cs *cs = (struct cap_cs *)rcs;
   for (unsigned i = 1; i < cs->num_old_ibs; i++)
      cap_buffer_destroy(cs->ws, &cs->old_ibs[i]->base);
   if (cs->num_old_ibs) /* keep the first IB, drop the current one */
      cap_buffer_destroy(cs->ws, &cs->ib->base);
   cs->num_old_ibs = 0;
   cs->num_bos = 0;
   cs->chain_size_ptr = NULL;
   cs->first_ib_dw = 0;
   memset(cs->first_ib->ptr, 0, cs->first_ib->size);
   cs_use_ib(cs, cs->first_ib);
}

static void
cap_cs_destroy(struct radeon_cmdbuf *rcs)
{
   struct cap_cs *cs = (struct cap_cs *)rcs;
   cap_cs_reset(rcs);
   cap_buffer_destroy(cs->ws, &cs->first_ib->base);
   free(cs->old_ibs);
   free(cs->bos);
   free(cs);
}

static void
pad_ib(struct cap_cs *cs, unsigned reserve)
{
   /* pad so that cdw + reserve is a multiple of pad_mask + 1 dwords (the chain packet ends the IB) */
   uint32_t mask = pad_mask(cs->ip);
   while ((cs->base.cdw + reserve) & mask)
      cs->base.buf[cs->base.cdw++] = PKT3_NOP_PAD;
}

static void
cap_cs_grow(struct radeon_cmdbuf *rcs, size_t min_size)
{
   struct cap_cs *cs = (struct cap_cs *)rcs;
   unsigned dw = app_ib_dw;
   while (dw < min_size + 16)
      dw *= 2;
   struct cap_bo *next = new_ib(cs->ws, dw);

   pad_ib(cs, 4);
   uint32_t *b = cs->base.buf;
   b[cs->base.cdw++] = PKT3(PKT3_INDIRECT_BUFFER_CIK, 2, 0);
   b[cs->base.cdw++] = (uint32_t)next->base.va;
   b[cs->base.cdw++] = (uint32_t)(next->base.va >> 32);
   b[cs->base.cdw++] = IB_CONTROL_CHAIN | IB_CONTROL_VALID; /* size patched at finalize/grow */
   if (cs->chain_size_ptr)
      *cs->chain_size_ptr |= cs->base.cdw; /* the previous chain packet points at this IB */
   else
      cs->first_ib_dw = cs->base.cdw;
   cs->chain_size_ptr = &b[cs->base.cdw - 1];

   cs->old_ibs = realloc(cs->old_ibs, (cs->num_old_ibs + 1) * sizeof(*cs->old_ibs));
   if (!cs->old_ibs)
      die("out of memory");
   cs->old_ibs[cs->num_old_ibs++] = cs->ib;
   cs_use_ib(cs, next);
}

static VkResult
cap_cs_finalize(struct radeon_cmdbuf *rcs)
{
   struct cap_cs *cs = (struct cap_cs *)rcs;
   pad_ib(cs, 0);
   if (cs->chain_size_ptr)
      *cs->chain_size_ptr |= cs->base.cdw;
   else
      cs->first_ib_dw = cs->base.cdw;
   return VK_SUCCESS;
}

static void
cap_cs_add_buffers(struct radeon_cmdbuf *to, struct radeon_cmdbuf *from)
{
   struct cap_cs *f = (struct cap_cs *)from;
   for (unsigned i = 0; i < f->num_bos; i++)
      cap_cs_add_buffer(to, f->bos[i]);
}

static void
cap_cs_execute_secondary(struct radeon_cmdbuf *parent, struct radeon_cmdbuf *child, bool allow_ib2)
{
   die("secondary command buffers are not supported by radv_capture");
}

static bool
cap_ctx_wait_idle(struct radeon_winsys_ctx *ctx, enum amd_ip_type ip, int ring)
{
   return true;
}

static uint64_t
cap_query_value(struct radeon_winsys *ws, enum radeon_value_id v)
{
   return 0;
}

/* ---------------------------------------------------------------- capture writer -------- */

static void
write_bytes(const char *path, const void *data, size_t n)
{
   FILE *f = fopen(path, "wb");
   /* fclose flushes: a full disk shows up there, and a short BO file must not pass as a capture */
   if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
      perror(path);
      exit(1);
   }
}

static int
cs_has_bo(struct cap_cs **css, unsigned n, struct cap_bo *bo)
{
   for (unsigned c = 0; c < n; c++)
      for (unsigned i = 0; i < css[c]->num_bos; i++)
         if (css[c]->bos[i] == &bo->base)
            return 1;
   return 0;
}

static const char *ip_name(enum amd_ip_type ip)
{
   switch (ip) {
   case AMD_IP_GFX: return "gfx";
   case AMD_IP_COMPUTE: return "compute";
   default: return "other";
   }
}

static VkResult
cap_cs_submit(struct radeon_winsys_ctx *ctx, uint32_t submit_count,
              const struct radv_winsys_submit_info *submits, uint32_t wait_count,
              const struct vk_sync_wait *waits, uint32_t signal_count,
              const struct vk_sync_signal *signals, bool can_patch)
{
   char dir[4096], path[4200];
   snprintf(dir, sizeof(dir), "%s/submit%u", out_dir, submit_counter++);
   if (mkdir(dir, 0777) && errno != EEXIST) {
      perror(dir);
      exit(1);
   }
   snprintf(path, sizeof(path), "%s/capture.json", dir);
   FILE *j = fopen(path, "w");
   if (!j) {
      perror(path);
      exit(1);
   }
   /* gb_addr_config: what RADV's addrlib laid tiled images out with (the null winsys leaves it
    * 0: one pipe); wavelift's image layouts of the _X/_T swizzle modes depend on it */
   fprintf(j, "{\n  \"format\": \"radv-capture 1\",\n  \"gb_addr_config\": %u,\n  \"submits\": [\n",
           g_gb_addr_config);
   struct cap_cs *all[64];
   unsigned nall = 0;
   for (uint32_t s = 0; s < submit_count; s++) {
      const struct radv_winsys_submit_info *si = &submits[s];
      fprintf(j, "    {\"ip\": \"%s\", \"queue_index\": %d, \"ibs\": [\n", ip_name(si->ip_type),
              si->queue_index);
      struct cap_cs *list[64];
      const char *role[64];
      unsigned n = 0;
      if (si->initial_preamble_cs) {
         list[n] = (struct cap_cs *)si->initial_preamble_cs;
         role[n++] = "initial_preamble";
      }
      for (unsigned c = 0; c < si->cs_count && n < 64; c++) {
         list[n] = (struct cap_cs *)si->cs_array[c];
         role[n++] = "command_buffer";
      }
      for (unsigned i = 0; i < n; i++) {
         struct cap_cs *cs = list[i];
         fprintf(j, "      {\"role\": \"%s\", \"va\": \"0x%016llx\", \"size_dw\": %u, \"chained_ibs\": %u}%s\n",
                 role[i], (unsigned long long)cs->first_ib->base.va, cs->first_ib_dw,
                 cs->num_old_ibs, i + 1 < n ? "," : "");
         if (nall < 64)
            all[nall++] = cs;
      }
      fprintf(j, "    ]}%s\n", s + 1 < submit_count ? "," : "");
   }
   if (submit_count && submits[0].continue_preamble_cs)
      fprintf(j, "  ],\n  \"note\": \"continue_preamble_cs not captured (only the first batch runs here)\",\n  \"bos\": [\n");
   else
      fprintf(j, "  ],\n  \"bos\": [\n");
   /* every live BO, oldest first */
   struct cap_bo *tail = bo_list_head;
   while (tail && tail->next)
      tail = tail->next;
   int first = 1;
   for (struct cap_bo *bo = tail; bo; bo = bo->prev) {
      char name[64];
      snprintf(name, sizeof(name), "bo%04u_%016llx.bin", bo->id, (unsigned long long)bo->base.va);
      snprintf(path, sizeof(path), "%s/%s", dir, name);
      write_bytes(path, bo->ptr, bo->size);
      fprintf(j, "%s    {\"id\": %u, \"va\": \"0x%016llx\", \"size\": %llu, \"domain\": %u, "
                 "\"flags\": \"0x%x\", \"ib\": %s, \"in_submit_bo_list\": %s, \"file\": \"%s\"}",
              first ? "" : ",\n", bo->id, (unsigned long long)bo->base.va,
              (unsigned long long)bo->size, bo->domain, bo->flags, bo->is_ib ? "true" : "false",
              cs_has_bo(all, nall, bo) ? "true" : "false", name);
      first = 0;
   }
   fprintf(j, "\n  ]\n}\n");
   if (ferror(j) | fclose(j)) {
      perror(path);
      exit(1);
   }
   fprintf(stderr, "radv_capture: wrote %s\n", dir);
   return VK_SUCCESS;
}

/* ---------------------------------------------------------------- finding the winsys ---- */

/* true if [p, p+n) can be read: write() reports EFAULT instead of faulting */
static int
readable(const void *p, size_t n)
{
   static int fds[2] = {-1, -1};
   if (fds[0] < 0 && pipe(fds))
      die("pipe failed");
   if ((uintptr_t)p < 4096)
      return 0;
   ssize_t w = write(fds[1], p, n);
   if (w != (ssize_t)n)
      return 0;
   char sink[512];
   while (n) {
      ssize_t r = read(fds[0], sink, n < sizeof(sink) ? n : sizeof(sink));
      if (r <= 0)
         break;
      n -= r;
   }
   return 1;
}

static struct radeon_winsys *
find_winsys(VkInstance inst, VkPhysicalDevice pd, size_t *ws_off)
{
   Dl_info lib;
   void *h = dlopen(RADV_LIB, RTLD_NOW | RTLD_NOLOAD);
   void *sym = h ? dlsym(h, "vk_icdGetInstanceProcAddr") : NULL;
   if (!sym || !dladdr(sym, &lib))
      die("cannot locate libvulkan_radeon.so in memory");
   /* struct radv_physical_device { struct vk_physical_device vk; struct radv_instance *instance;
    *                               struct radeon_winsys *ws; ... }  (radv_private.h:262) */
   uintptr_t *w = (uintptr_t *)pd;
   for (unsigned i = 0; i < 8192; i++) {
      if (w[i] != (uintptr_t)inst)
         continue;
      struct radeon_winsys *ws = (struct radeon_winsys *)w[i + 1];
      if (!readable(ws, sizeof(*ws)))
         continue;
      Dl_info a;
      if (!dladdr((void *)ws->get_chip_name, &a) || a.dli_fbase != lib.dli_fbase)
         continue;
      if (strcmp(ws->get_chip_name(ws), "Null hardware"))
         die("the RADV device is not the null device (is RADV_FORCE_FAMILY set, and no AMD GPU?)");
      /* layout check: what the 22.3.6 null winsys fills in, and what it leaves NULL */
      if (!ws->buffer_create || !ws->buffer_map || !ws->cs_create || !ws->cs_finalize ||
          !ws->ctx_create || !ws->get_sync_types || ws->cs_submit || ws->cs_grow ||
          ws->cs_add_buffer || ws->cs_reset || ws->surface_init)
         die("struct radeon_winsys does not look like Mesa 22.3.6's null winsys");
      fprintf(stderr, "radv_capture: radeon_winsys at radv_physical_device+%u\n",
              (unsigned)((i + 1) * sizeof(uintptr_t)));
      *ws_off = (i + 1) * sizeof(uintptr_t);
      return ws;
   }
   die("could not find struct radeon_winsys in radv_physical_device");
   return NULL;
}

/* The null winsys reports no VRAM and no GTT, so RADV exposes no memory heap or type at all and
 * vkAllocateMemory is impossible. struct radv_physical_device (radv_private.h:262-312) has
 *    ... bool use_ngg, use_ngg_culling, use_ngg_streamout;
 *    uint8_t ps_wave_size, cs_wave_size, ge_wave_size, rt_wave_size;
 *    bool use_llvm, emulate_etc2;
 *    VkPhysicalDeviceMemoryProperties memory_properties;
 *    enum radeon_bo_domain memory_domains[VK_MAX_MEMORY_TYPES];
 *    enum radeon_bo_flag memory_flags[VK_MAX_MEMORY_TYPES];
 *    unsigned heaps; uint32_t memory_types_32bit; ...
 * We find memory_properties by that byte signature (six 0/1 bools, four wave sizes of 32/64, two
 * 0/1 bools, then all zero) and give it one GTT heap with one host-visible, coherent type, as the
 * amdgpu winsys would for a GTT-only device. vkGetPhysicalDeviceMemoryProperties then confirms
 * the offset. */
static void
add_gtt_memory(VkPhysicalDevice pd, size_t ws_off, PFN_vkGetPhysicalDeviceMemoryProperties get)
{
   const uint8_t *b = (const uint8_t *)pd;
   size_t found = 0;
   int nfound = 0;
   size_t end = ws_off + 8;
   while (end < ws_off + 16384 && readable(b + end, 256))
      end += 256;
   size_t need = 12 + 8 + sizeof(VkPhysicalDeviceMemoryProperties) + 2 * 4 * VK_MAX_MEMORY_TYPES + 8;
   for (size_t p = ws_off + 8; p + need < end; p++) {
      int ok = 1;
      for (int k = 0; k < 12 && ok; k++) {
         uint8_t v = b[p + k];
         ok = (k >= 6 && k < 10) ? (v == 32 || v == 64) : (v <= 1);
      }
      if (!ok)
         continue;
      size_t mp = (p + 12 + 7) & ~(size_t)7;
      for (size_t k = p + 12; k < mp + sizeof(VkPhysicalDeviceMemoryProperties) + 2 * 4 * VK_MAX_MEMORY_TYPES + 8 && ok; k++)
         ok = b[k] == 0;
      if (ok) {
         found = mp;
         nfound++;
      }
   }
   if (nfound != 1)
      die("could not locate radv_physical_device::memory_properties (signature not unique)");
   VkPhysicalDeviceMemoryProperties *props = (VkPhysicalDeviceMemoryProperties *)(b + found);
   uint32_t *domains = (uint32_t *)(b + found + sizeof(*props));
   uint32_t *flags = domains + VK_MAX_MEMORY_TYPES;
   uint32_t *heaps = flags + VK_MAX_MEMORY_TYPES;
   props->memoryHeapCount = 1;
   props->memoryHeaps[0] = (VkMemoryHeap){.size = 4ull << 30, .flags = 0};
   props->memoryTypeCount = 1;
   props->memoryTypes[0] = (VkMemoryType){
      .propertyFlags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      .heapIndex = 0};
   domains[0] = RADEON_DOMAIN_GTT;
   flags[0] = RADEON_FLAG_GTT_WC | RADEON_FLAG_CPU_ACCESS;
   *heaps = 1u << 1; /* RADV_HEAP_GTT (radv_private.h: VRAM=1<<0, GTT=1<<1, VRAM_VIS=1<<2) */
   VkPhysicalDeviceMemoryProperties check;
   get(pd, &check);
   if (check.memoryTypeCount != 1 || check.memoryHeapCount != 1 ||
       check.memoryHeaps[0].size != (4ull << 30))
      die("memory_properties patch did not take (layout mismatch)");
   fprintf(stderr, "radv_capture: memory_properties at radv_physical_device+%zu, one GTT type added\n",
           found);
}

static void
patch_winsys(struct radeon_winsys *ws)
{
   orig_buffer_map = ws->buffer_map;
   orig_buffer_destroy = ws->buffer_destroy;
   ws->buffer_create = cap_buffer_create;
   ws->buffer_destroy = cap_buffer_destroy;
   ws->buffer_map = cap_buffer_map;
   ws->buffer_unmap = cap_buffer_unmap;
   ws->cs_create = cap_cs_create;
   ws->cs_destroy = cap_cs_destroy;
   ws->cs_reset = cap_cs_reset;
   ws->cs_finalize = cap_cs_finalize;
   ws->cs_grow = cap_cs_grow;
   ws->cs_submit = cap_cs_submit;
   ws->cs_add_buffer = cap_cs_add_buffer;
   ws->cs_add_buffers = cap_cs_add_buffers;
   ws->cs_execute_secondary = cap_cs_execute_secondary;
   ws->ctx_wait_idle = cap_ctx_wait_idle;
   ws->query_value = cap_query_value;
}

/* ---------------------------------------------------------------- images --------------- */

/* The null winsys has no surface_init (it cannot create images). Ours does what the amdgpu
 * winsys's does (radv_amdgpu_surface.c): hand the surface to Mesa's own ac_compute_surface and
 * addrlib, compiled into this program from the same Mesa source, so the swizzle mode, pitch,
 * alignment and metadata (DCC) are RADV's own choice. addrlib needs the chip's family id and
 * revision, which the null winsys leaves 0 (RADV itself reads neither): we give it the first
 * revision of the chip's range in addrlib's amdgpu_asic_addr.h (and has_graphics, below), in a
 * copy of rad_info that only ac_compute_surface reads, so RADV's rad_info (and with it every
 * older capture) is untouched. gb_addr_config stays what the null
 * winsys has (0), recorded in capture.json. */
static struct ac_addrlib *g_addrlib;
static struct radeon_info g_surf_info;

static int
cap_surface_init(struct radeon_winsys *ws, const struct ac_surf_info *surf_info,
                 struct radeon_surf *surf)
{
   unsigned type = RADEON_SURF_GET(surf->flags, TYPE);
   struct ac_surf_config config;
   memcpy(&config.info, surf_info, sizeof(config.info));
   config.is_1d = type == RADEON_SURF_TYPE_1D || type == RADEON_SURF_TYPE_1D_ARRAY;
   config.is_3d = type == RADEON_SURF_TYPE_3D;
   config.is_cube = type == RADEON_SURF_TYPE_CUBEMAP;
   int r = ac_compute_surface(g_addrlib, &g_surf_info, &config, RADEON_SURF_GET(surf->flags, MODE),
                              surf);
   /* what RADV and addrlib chose, for the README's table (radv_capture.log); with mip levels
    * or a pipe/bank XOR (T# base address bits [15:8]) also those (older logs lack them) */
   char tail[64] = "";
   if (surf_info->levels > 1 || surf->tile_swizzle)
      snprintf(tail, sizeof(tail), ", levels %u, tile_swizzle 0x%x", surf_info->levels,
               surf->tile_swizzle);
   fprintf(stderr,
           "radv_capture: surface %ux%ux%u layers %u bpe %u: swizzle_mode %u, %s, DCC %s "
           "(meta_offset %llu), size %llu, alignment %u%s\n",
           surf_info->width, surf_info->height, surf_info->depth, surf_info->array_size, surf->bpe,
           surf->u.gfx9.swizzle_mode, surf->is_linear ? "linear" : "tiled",
           surf->meta_offset ? "yes" : "no", (unsigned long long)surf->meta_offset,
           (unsigned long long)surf->surf_size, 1u << surf->surf_alignment_log2, tail);
   return r;
}

static struct ac_addrlib *
cap_get_addrlib(struct radeon_winsys *ws)
{
   return g_addrlib;
}

static void
init_surfaces(struct radeon_winsys *ws, struct radeon_info *info)
{
   static const unsigned navi10[] = {AMDGPU_NAVI10_RANGE}, navi21[] = {AMDGPU_NAVI21_RANGE},
                         gfx1100[] = {AMDGPU_GFX1100_RANGE};
   g_surf_info = *info;
   /* a real navi10/navi21 has graphics (ac_gpu_info.c sets it from the kernel's GFX ring); the
    * null winsys leaves it false, which makes ac_surface treat the chip as compute-only and
    * never give a surface DCC. RADV itself never reads has_graphics. */
   g_surf_info.has_graphics = true;
   if (info->family == CHIP_NAVI10) {
      g_surf_info.family_id = FAMILY_NV;
      g_surf_info.chip_external_rev = navi10[0];
   } else if (info->family == CHIP_NAVI21) {
      g_surf_info.family_id = FAMILY_NV;
      g_surf_info.chip_external_rev = navi21[0];
   } else if (info->family == CHIP_GFX1100) {
      g_surf_info.family_id = FAMILY_GFX1100;
      g_surf_info.chip_external_rev = gfx1100[0];
   } else {
      die("images: only navi10, navi21 and gfx1100 are known to radv_capture");
   }
   /* the amdgpu winsys also sets rad_info.max_alignment from addrlib (radv_amdgpu_winsys.c:
    * ac_addrlib_create(&ws->info, &ws->info.max_alignment)); vkAllocateMemory passes it as the
    * BO alignment, so a 64 KiB swizzle mode's image starts on a 64 KiB boundary. Images only:
    * a buffer-only capture keeps the null winsys's 0 and its addresses. */
   g_addrlib = ac_addrlib_create(&g_surf_info, &info->max_alignment);
   if (!g_addrlib)
      die("ac_addrlib_create failed");
   ws->surface_init = cap_surface_init;
   ws->get_addrlib = cap_get_addrlib;
   fprintf(stderr, "radv_capture: images: addrlib for family %u rev 0x%x, gb_addr_config 0x%x, "
                   "max_alignment %llu\n",
           g_surf_info.family_id, g_surf_info.chip_external_rev, g_surf_info.gb_addr_config,
           (unsigned long long)info->max_alignment);
}

/* The null winsys reports no compute ring, so RADV exposes only the graphics queue family, and
 * vkCmdCopyBufferToImage there is a draw. An app that uploads with compute uses the compute
 * queue: we give rad_info.ip[AMD_IP_COMPUTE] one queue, and the table RADV built from it at
 * physical-device creation, struct radv_physical_device (radv_private.h:326)
 *    enum radv_queue_family vk_queue_to_radv[RADV_MAX_QUEUE_FAMILIES];  {GENERAL, unused, unused}
 *    uint32_t num_queues;                                                 1
 * found by that signature {0, 4, 4, 1} (unused = RADV_MAX_QUEUE_FAMILIES + 1 = 4), becomes
 * {GENERAL, COMPUTE, unused}, 2, as radv_physical_device_init_queue_table makes it when the
 * kernel reports a compute ring. vkGetPhysicalDeviceQueueFamilyProperties then confirms it. */
static void
add_compute_queue(VkInstance inst, VkPhysicalDevice pd, size_t ws_off, struct radeon_info *info,
                  PFN_vkGetInstanceProcAddr gipa)
{
   uint8_t *b = (uint8_t *)pd;
   size_t end = ws_off + 8, found = 0;
   int nfound = 0;
   while (end < ws_off + 65536 && readable(b + end, 256))
      end += 256;
   for (size_t p = ws_off + 8; p + 16 <= end; p += 4) {
      uint32_t w[4];
      memcpy(w, b + p, 16);
      if (w[0] == 0 && w[1] == 4 && w[2] == 4 && w[3] == 1) {
         found = p;
         nfound++;
      }
   }
   if (nfound != 1)
      die("could not locate radv_physical_device::vk_queue_to_radv (signature not unique)");
   uint32_t w[4] = {0, 1, 4, 2};
   memcpy(b + found, w, 16);
   info->ip[AMD_IP_COMPUTE].num_queues = 1;
   PFN_vkGetPhysicalDeviceQueueFamilyProperties get =
      (PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa(inst, "vkGetPhysicalDeviceQueueFamilyProperties");
   uint32_t n = 8;
   VkQueueFamilyProperties q[8];
   get(pd, &n, q);
   if (n != 2 || (q[1].queueFlags & VK_QUEUE_GRAPHICS_BIT) || !(q[1].queueFlags & VK_QUEUE_COMPUTE_BIT))
      die("compute queue patch did not take (layout mismatch)");
   fprintf(stderr, "radv_capture: compute queue family added (vk_queue_to_radv at radv_physical_device+%zu)\n",
           found);
}

/* ---------------------------------------------------------------- the Vulkan side ------- */

static void
radv_physical_device(VkInstance inst, VkPhysicalDevice pd, PFN_vkGetInstanceProcAddr gipa,
                     int want_compute)
{
   PFN_vkGetPhysicalDeviceMemoryProperties get =
      (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(inst, "vkGetPhysicalDeviceMemoryProperties");
   size_t ws_off;
   struct radeon_winsys *ws = find_winsys(inst, pd, &ws_off);
   patch_winsys(ws);
   add_gtt_memory(pd, ws_off, get);
   /* radv_physical_device::rad_info directly follows ws. The null winsys leaves num_cu at 0, which
    * makes radv_pipeline_init_scratch() compute max_waves = 0: no scratch ring, no
    * COMPUTE_TMPRING_SIZE, no scratch user SGPRs. Give it the chip's CU count. */
   struct radeon_info *info = (struct radeon_info *)((uint8_t *)pd + ws_off + sizeof(void *));
   if (info->family == CHIP_UNKNOWN || info->num_cu != 0 || info->max_se != 4)
      die("radv_physical_device::rad_info is not where expected");
   info->num_cu = app_num_cu;
   /* --gb-addr-config (images only): the GB_ADDR_CONFIG the amdgpu kernel reports for the chip
    * (ac_gpu_info.c: info->gb_addr_config = amdinfo.gb_addr_cfg), which the null winsys leaves
    * 0. addrlib lays tiled images out with it (pipes, packers: the _X modes' patterns and the
    * pipe/bank XOR of each image's base address); RADV itself reads it only for MSAA/DCC
    * "iterate 256" (radv_image.c), which no image here has. */
   if (want_compute && app_gb_addr_config_set) {
      info->gb_addr_config = app_gb_addr_config;
      fprintf(stderr, "radv_capture: rad_info.gb_addr_config set to 0x%x (null winsys leaves 0)\n",
              app_gb_addr_config);
   }
   g_gb_addr_config = info->gb_addr_config;
   fprintf(stderr, "radv_capture: rad_info.num_cu set to %u (null winsys leaves 0)\n", app_num_cu);
   if (want_compute) { /* images or texel buffers: the compute queue, and images */
      add_compute_queue(inst, pd, ws_off, info, gipa);
      init_surfaces(ws, info);
   }
}

static int
radv_last_alloc(uint64_t *va, unsigned *id)
{
   /* the VA of the memory just allocated is that of the newest BO */
   *va = bo_list_head->base.va;
   *id = bo_list_head->id;
   return 1;
}

static void
radv_results(const char *dir, const struct binding *b, unsigned nb, void **maps,
             const uint64_t *sizes, uint32_t qfi, int graphics)
{
   fprintf(stderr, "radv_capture: queue family %u (%s), %u submit(s) captured in %s\n", qfi,
           graphics ? "graphics+compute" : "compute", submit_counter, out_dir);
}

int
main(int argc, char **argv)
{
   static const struct app_hooks hooks = {.name = "radv_capture",
                                          .lib = RADV_LIB,
                                          .use_subgroup_size = 1,
                                          .physical_device = radv_physical_device,
                                          .last_alloc = radv_last_alloc,
                                          .results = radv_results};
   out_dir = argc > 2 ? argv[2] : NULL;
   if (argc > 2 && !getenv("RADV_FORCE_FAMILY")) {
      app_name = hooks.name;
      usage("set RADV_FORCE_FAMILY (e.g. navi21)");
   }
   return app_main(argc, argv, &hooks);
}
