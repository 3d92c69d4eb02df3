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

static void
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
static unsigned ib_dw_default = 8192;
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
   cs->first_ib = new_ib(ws, ib_dw_default);
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
   unsigned dw = ib_dw_default;
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

/* ---------------------------------------------------------------- the Vulkan side ------- */

#define MAX_BINDINGS 64
struct binding {
   unsigned set, binding, bytes;
   VkDescriptorType type;
   const char *file;
};

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
   fprintf(stderr, "radv_capture: %s\nusage: radv_capture SHADER.spv OUTDIR [--binding SET:BINDING:ssbo|ubo:BYTES[:FILE]]...\n"
                   "       [--push FILE | --push-u32 A,B,...] [--groups X,Y,Z] [--indirect]\n"
                   "       [--subgroup-size 32|64] [--ib-dw N] [--num-cu N] [--entry NAME]\n", msg);
   exit(2);
}

static PFN_vkGetInstanceProcAddr gipa;
static PFN_vkGetDeviceProcAddr gdpa;
#define IPROC(inst, name) PFN_##name name = (PFN_##name)gipa(inst, #name)
#define DPROC(dev, name) PFN_##name name = (PFN_##name)gdpa(dev, #name)

int
main(int argc, char **argv)
{
   if (argc < 3)
      usage("need SHADER.spv and OUTDIR");
   const char *spv_path = argv[1];
   out_dir = argv[2];
   struct binding bindings[MAX_BINDINGS];
   unsigned nb = 0;
   uint8_t push[256];
   unsigned push_size = 0;
   unsigned gx = 1, gy = 1, gz = 1, subgroup = 0, num_cu = 80;
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
         if (!strcmp(type, "ssbo"))
            b->type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
         else if (!strcmp(type, "ubo"))
            b->type = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
         else
            usage("binding TYPE must be ssbo or ubo");
         if (b->set >= 8 || !b->bytes)
            usage("bad --binding set or size");
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
         ib_dw_default = atoi(v);
         if (ib_dw_default < 1024)
            usage("--ib-dw must be at least 1024");
         i++;
      } else if (!strcmp(a, "--num-cu") && v) {
         num_cu = atoi(v);
         i++;
      } else if (!strcmp(a, "--entry") && v) {
         entry = v;
         i++;
      } else {
         usage(a);
      }
   }
   if (mkdir(out_dir, 0777) && errno != EEXIST) {
      perror(out_dir);
      return 1;
   }
   if (!getenv("RADV_FORCE_FAMILY"))
      usage("set RADV_FORCE_FAMILY (e.g. navi21)");

   void *lib = dlopen(RADV_LIB, RTLD_NOW | RTLD_LOCAL);
   if (!lib)
      die(dlerror());
   gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vk_icdGetInstanceProcAddr");
   if (!gipa)
      die("no vk_icdGetInstanceProcAddr in libvulkan_radeon.so");

   IPROC(NULL, vkCreateInstance);
   VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = "radv_capture",
                            .apiVersion = VK_API_VERSION_1_3};
   VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
   VkInstance inst;
   CHECK(vkCreateInstance(&ici, NULL, &inst));
   IPROC(inst, vkEnumeratePhysicalDevices);
   IPROC(inst, vkGetPhysicalDeviceProperties);
   IPROC(inst, vkGetPhysicalDeviceQueueFamilyProperties);
   IPROC(inst, vkGetPhysicalDeviceMemoryProperties);
   IPROC(inst, vkCreateDevice);
   gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");

   uint32_t n = 1;
   VkPhysicalDevice pd;
   VkResult er = vkEnumeratePhysicalDevices(inst, &n, &pd);
   if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || n < 1)
      die("no RADV physical device (set RADV_FORCE_FAMILY)");
   VkPhysicalDeviceProperties props;
   vkGetPhysicalDeviceProperties(pd, &props);
   fprintf(stderr, "radv_capture: device: %s\n", props.deviceName);

   size_t ws_off;
   struct radeon_winsys *ws = find_winsys(inst, pd, &ws_off);
   patch_winsys(ws);
   add_gtt_memory(pd, ws_off, vkGetPhysicalDeviceMemoryProperties);
   /* radv_physical_device::rad_info directly follows ws. The null winsys leaves num_cu at 0, which
    * makes radv_pipeline_init_scratch() compute max_waves = 0: no scratch ring, no
    * COMPUTE_TMPRING_SIZE, no scratch user SGPRs. Give it the chip's CU count. */
   struct radeon_info *info = (struct radeon_info *)((uint8_t *)pd + ws_off + sizeof(void *));
   if (info->family == CHIP_UNKNOWN || info->num_cu != 0 || info->max_se != 4)
      die("radv_physical_device::rad_info is not where expected");
   info->num_cu = num_cu;
   g_gb_addr_config = info->gb_addr_config;
   fprintf(stderr, "radv_capture: rad_info.num_cu set to %u (null winsys leaves 0)\n", num_cu);

   uint32_t nqf = 8;
   VkQueueFamilyProperties qfp[8];
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nqf, qfp);
   uint32_t qfi = UINT32_MAX;
   for (uint32_t q = 0; q < nqf; q++) /* prefer a compute-only family if RADV exposes one */
      if ((qfp[q].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
          (qfi == UINT32_MAX || !(qfp[q].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
         qfi = q;
   if (qfi == UINT32_MAX)
      die("no compute queue family");

   float prio = 1.0f;
   VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = qfi,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
   VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                           .subgroupSizeControl = subgroup != 0};
   VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f13,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qci};
   VkDevice dev;
   CHECK(vkCreateDevice(pd, &dci, NULL, &dev));

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
   DPROC(dev, vkDestroyDevice);
   IPROC(inst, vkDestroyInstance);

   VkQueue queue;
   vkGetDeviceQueue(dev, qfi, 0, &queue);

   size_t spv_size;
   void *spv = read_all(spv_path, &spv_size);
   VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = spv_size,
                                    .pCode = spv};
   VkShaderModule sm;
   CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));

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
      CHECK(vkCreateDescriptorSetLayout(dev, &c, NULL, &dsl[s]));
   }
   VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_size};
   VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = nsets,
                                      .pSetLayouts = dsl,
                                      .pushConstantRangeCount = push_size ? 1 : 0,
                                      .pPushConstantRanges = &pcr};
   VkPipelineLayout pl;
   CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));

   VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = subgroup};
   VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .pNext = subgroup ? &rss : NULL,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = entry},
      .layout = pl};
   VkPipeline pipe;
   CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));

   /* memory: one host-visible allocation per buffer */
   VkPhysicalDeviceMemoryProperties mp;
   vkGetPhysicalDeviceMemoryProperties(pd, &mp);
   VkBuffer bufs[MAX_BINDINGS + 1];
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
   for (unsigned b = 0; b <= nb; b++) {
      int is_ind = b == nb;
      if (is_ind && !indirect)
         break;
      uint64_t bytes = is_ind ? 12 : bindings[b].bytes;
      VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                .size = bytes,
                                .usage = is_ind ? VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT
                                         : bindings[b].type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                            ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
                                            : VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT};
      CHECK(vkCreateBuffer(dev, &bci, NULL, &bufs[b]));
      VkMemoryRequirements mr;
      vkGetBufferMemoryRequirements(dev, bufs[b], &mr);
      uint32_t type = UINT32_MAX;
      for (uint32_t t = 0; t < mp.memoryTypeCount; t++)
         if ((mr.memoryTypeBits & (1u << t)) &&
             (mp.memoryTypes[t].propertyFlags & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==
                (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
            type = t;
            break;
         }
      if (type == UINT32_MAX)
         die("no host-visible memory type");
      VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = mr.size,
                                  .memoryTypeIndex = type};
      VkDeviceMemory mem;
      CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
      CHECK(vkBindBufferMemory(dev, bufs[b], mem, 0));
      void *p;
      CHECK(vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, &p));
      if (is_ind) {
         uint32_t g[3] = {gx, gy, gz};
         memcpy(p, g, 12);
      } else if (bindings[b].file) {
         size_t fn;
         void *d = read_all(bindings[b].file, &fn);
         memcpy(p, d, fn < bytes ? fn : bytes);
         free(d);
      }
      /* the VA of this buffer is that of the BO just allocated (newest BO) */
      struct cap_bo *bo = bo_list_head;
      if (is_ind)
         fprintf(m, "indirect va=0x%016llx size=%llu bo=%u\n", (unsigned long long)bo->base.va,
                 (unsigned long long)bytes, bo->id);
      else
         fprintf(m, "set=%u binding=%u type=%s va=0x%016llx size=%llu bo=%u\n", bindings[b].set,
                 bindings[b].binding,
                 bindings[b].type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ? "ssbo" : "ubo",
                 (unsigned long long)bo->base.va, (unsigned long long)bytes, bo->id);
   }
   fprintf(m, "groups=%u,%u,%u indirect=%d push_bytes=%u\n", gx, gy, gz, indirect, push_size);
   fclose(m);

   VkDescriptorSet sets[8] = {0};
   if (nsets) {
      VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MAX_BINDINGS},
                                    {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, MAX_BINDINGS}};
      VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                         .maxSets = 8,
                                         .poolSizeCount = 2,
                                         .pPoolSizes = ps};
      VkDescriptorPool dp;
      CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
      VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                          .descriptorPool = dp,
                                          .descriptorSetCount = nsets,
                                          .pSetLayouts = dsl};
      CHECK(vkAllocateDescriptorSets(dev, &dsai, sets));
      for (unsigned b = 0; b < nb; b++) {
         VkDescriptorBufferInfo bi = {.buffer = bufs[b], .offset = 0, .range = VK_WHOLE_SIZE};
         VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                   .dstSet = sets[bindings[b].set],
                                   .dstBinding = bindings[b].binding,
                                   .descriptorCount = 1,
                                   .descriptorType = bindings[b].type,
                                   .pBufferInfo = &bi};
         vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
      }
   }

   VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = qfi};
   VkCommandPool pool;
   CHECK(vkCreateCommandPool(dev, &cpi, NULL, &pool));
   VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
   VkCommandBuffer cb;
   CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
   VkCommandBufferBeginInfo cbbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
   CHECK(vkBeginCommandBuffer(cb, &cbbi));
   vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
   if (nsets)
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, nsets, sets, 0, NULL);
   if (push_size)
      vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
   vkCmdDispatch(cb, gx, gy, gz);
   if (indirect)
      vkCmdDispatchIndirect(cb, bufs[nb], 0);
   CHECK(vkEndCommandBuffer(cb));

   VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                      .commandBufferCount = 1,
                      .pCommandBuffers = &cb};
   CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
   CHECK(vkQueueWaitIdle(queue));
   fprintf(stderr, "radv_capture: queue family %u (%s), %u submit(s) captured in %s\n", qfi,
           (qfp[qfi].queueFlags & VK_QUEUE_GRAPHICS_BIT) ? "graphics+compute" : "compute",
           submit_counter, out_dir);
   /* leave teardown to process exit: the capture is on disk */
   return 0;
}
