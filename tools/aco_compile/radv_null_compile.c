/* radv_null_compile: build one compute pipeline on Mesa RADV's null winsys (no AMD GPU needed)
 * and dump what the driver produced.
 *
 * This is the C half of tools/aco_compile (aco-compile); run it through the `aco-compile` script, which
 * derives the descriptor layout from the SPIR-V, sets the environment (RADV_FORCE_FAMILY, ...)
 * and turns the dumps into .bin/.s/.json.
 *
 * usage: radv_null_compile SHADER.spv OUTPREFIX [options]
 *   --binding SET:BINDING:TYPE:COUNT  one descriptor set layout binding (repeatable). TYPE is one of
 *                                     ubo ssbo ubo_dyn ssbo_dyn storage_image sampled_image sampler
 *                                     combined_image_sampler uniform_texel_buffer
 *                                     storage_texel_buffer inline_uniform_block accel_struct.
 *                                     For inline_uniform_block COUNT is the size in bytes.
 *   --push SIZE                       push constant range [0, SIZE) for the compute stage
 *   --subgroup-size 32|64             VkPipelineShaderStageRequiredSubgroupSizeCreateInfo
 *   --spec ID=VALUE                   32-bit specialization constant (repeatable)
 *   --entry NAME                      entry point (default "main")
 *   --robust-buffer-access            enable the robustBufferAccess feature (off by default)
 *
 * Writes (all as PREFIX.<suffix>):
 *   helper.txt   key=value facts: device, executables, statistics, IR names, file names
 *   exeE.irN.txt the internal representations (VK_KHR_pipeline_executable_properties), raw text
 *   cache        vkGetPipelineCacheData of a second, uncaptured build of the same pipeline
 *                (pipelines created with CAPTURE_* flags are not put into the cache)
 * Exit status: 0 ok, 1 Vulkan failure, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define MAX_BINDINGS 256
#define MAX_SETS 32
#define MAX_SPEC 64

static FILE *facts;

#define CHECK(x)                                                                      \
   do {                                                                               \
      VkResult r_ = (x);                                                              \
      if (r_ != VK_SUCCESS) {                                                         \
         fprintf(stderr, "radv_null_compile: %s failed: VkResult %d\n", #x, (int)r_); \
         if (facts)                                                                   \
            fprintf(facts, "error=%s failed: VkResult %d\n", #x, (int)r_);            \
         exit(1);                                                                     \
      }                                                                               \
   } while (0)

struct binding {
   unsigned set, binding, count;
   VkDescriptorType type;
};

static const struct {
   const char *name;
   VkDescriptorType type;
} type_names[] = {
   {"ubo", VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER},
   {"ssbo", VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
   {"ubo_dyn", VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC},
   {"ssbo_dyn", VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC},
   {"storage_image", VK_DESCRIPTOR_TYPE_STORAGE_IMAGE},
   {"sampled_image", VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE},
   {"sampler", VK_DESCRIPTOR_TYPE_SAMPLER},
   {"combined_image_sampler", VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER},
   {"uniform_texel_buffer", VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER},
   {"storage_texel_buffer", VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER},
   {"inline_uniform_block", VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK},
   {"accel_struct", VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR},
};

static void
usage(const char *msg)
{
   fprintf(stderr, "radv_null_compile: %s\n"
                   "usage: radv_null_compile SHADER.spv OUTPREFIX [--binding SET:BINDING:TYPE:COUNT]...\n"
                   "       [--push SIZE] [--subgroup-size 32|64] [--spec ID=VALUE]... [--entry NAME]\n"
                   "       [--robust-buffer-access]\n",
           msg);
   exit(2);
}

static void *
read_file(const char *path, size_t *size)
{
   FILE *f = fopen(path, "rb");
   if (!f) {
      perror(path);
      exit(2);
   }
   fseek(f, 0, SEEK_END);
   long n = ftell(f);
   fseek(f, 0, SEEK_SET);
   if (n <= 0 || n % 4) {
      fprintf(stderr, "radv_null_compile: %s: not a SPIR-V module (size %ld)\n", path, n);
      exit(2);
   }
   void *buf = malloc(n);
   if (!buf || fread(buf, 1, n, f) != (size_t)n) {
      perror(path);
      exit(2);
   }
   fclose(f);
   *size = n;
   return buf;
}

static void
write_file(const char *path, const void *data, size_t size)
{
   FILE *f = fopen(path, "wb");
   if (!f || fwrite(data, 1, size, f) != size) {
      perror(path);
      exit(1);
   }
   fclose(f);
}

static VkDescriptorType
parse_type(const char *s)
{
   for (unsigned i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
      if (!strcmp(s, type_names[i].name))
         return type_names[i].type;
   usage("unknown descriptor type in --binding");
   return 0;
}

int
main(int argc, char **argv)
{
   if (argc < 3)
      usage("missing arguments");
   const char *spv_path = argv[1], *prefix = argv[2], *entry = "main";
   struct binding bindings[MAX_BINDINGS];
   unsigned num_bindings = 0, push_size = 0, subgroup_size = 0, num_spec = 0, robust = 0;
   VkSpecializationMapEntry spec_map[MAX_SPEC];
   uint32_t spec_data[MAX_SPEC];

   for (int i = 3; i < argc; i++) {
      const char *a = argv[i];
      if (!strcmp(a, "--robust-buffer-access")) {
         robust = 1;
         continue;
      }
      if (i + 1 >= argc)
         usage("option without value");
      const char *v = argv[++i];
      if (!strcmp(a, "--binding")) {
         char tname[64];
         struct binding *b = &bindings[num_bindings];
         if (num_bindings >= MAX_BINDINGS)
            usage("too many bindings");
         if (sscanf(v, "%u:%u:%63[a-z_]:%u", &b->set, &b->binding, tname, &b->count) != 4)
            usage("bad --binding (want SET:BINDING:TYPE:COUNT)");
         if (b->set >= MAX_SETS || b->count == 0)
            usage("--binding set must be < 32 and count > 0");
         b->type = parse_type(tname);
         num_bindings++;
      } else if (!strcmp(a, "--push")) {
         push_size = (unsigned)strtoul(v, NULL, 0);
      } else if (!strcmp(a, "--subgroup-size")) {
         subgroup_size = (unsigned)strtoul(v, NULL, 0);
         if (subgroup_size != 32 && subgroup_size != 64)
            usage("--subgroup-size must be 32 or 64");
      } else if (!strcmp(a, "--spec")) {
         unsigned id;
         long long val;
         if (num_spec >= MAX_SPEC || sscanf(v, "%u=%lli", &id, &val) != 2)
            usage("bad --spec (want ID=VALUE)");
         spec_map[num_spec] = (VkSpecializationMapEntry){id, num_spec * 4, 4};
         spec_data[num_spec] = (uint32_t)val;
         num_spec++;
      } else if (!strcmp(a, "--entry")) {
         entry = v;
      } else {
         usage("unknown option");
      }
   }

   char path[4096];
   snprintf(path, sizeof path, "%s.helper.txt", prefix);
   facts = fopen(path, "w");
   if (!facts) {
      perror(path);
      return 1;
   }

   VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = "aco-compile",
                            .apiVersion = VK_API_VERSION_1_3};
   VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
   VkInstance inst;
   CHECK(vkCreateInstance(&ici, NULL, &inst));

   uint32_t n = 0;
   CHECK(vkEnumeratePhysicalDevices(inst, &n, NULL));
   VkPhysicalDevice pds[16];
   if (n > 16)
      n = 16;
   CHECK(vkEnumeratePhysicalDevices(inst, &n, pds));
   VkPhysicalDevice pd = VK_NULL_HANDLE;
   for (uint32_t i = 0; i < n && pd == VK_NULL_HANDLE; i++) {
      VkPhysicalDeviceDriverProperties drv = {
         .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
      VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &drv};
      vkGetPhysicalDeviceProperties2(pds[i], &p2);
      if (p2.properties.vendorID != 0x1002)
         continue;
      pd = pds[i];
      fprintf(facts, "device_name=%s\nvendor_id=0x%04x\ndevice_id=0x%04x\n",
              p2.properties.deviceName, p2.properties.vendorID, p2.properties.deviceID);
      fprintf(facts, "driver_name=%s\ndriver_info=%s\napi_version=%u.%u.%u\n", drv.driverName,
              drv.driverInfo, VK_API_VERSION_MAJOR(p2.properties.apiVersion),
              VK_API_VERSION_MINOR(p2.properties.apiVersion),
              VK_API_VERSION_PATCH(p2.properties.apiVersion));
   }
   if (pd == VK_NULL_HANDLE) {
      fprintf(stderr, "radv_null_compile: no AMD (RADV) Vulkan device; is RADV_FORCE_FAMILY set "
                      "and mesa-vulkan-drivers installed?\n");
      fprintf(facts, "error=no RADV device\n");
      return 1;
   }

   uint32_t nq = 0;
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
   VkQueueFamilyProperties qf[16];
   if (nq > 16)
      nq = 16;
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
   uint32_t qfi = 0;
   for (uint32_t i = 0; i < nq; i++)
      if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
         qfi = i;
         break;
      }

   /* Enable only what the pipeline may need: subgroup size control, inline uniform blocks,
    * pipeline executable properties (statistics + internal representations). */
   VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
   VkPhysicalDeviceVulkan13Features f13 = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                           .pNext = &pef};
   VkPhysicalDeviceVulkan12Features f12 = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                           .pNext = &f13};
   VkPhysicalDeviceVulkan11Features f11 = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                           .pNext = &f12};
   VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                   .pNext = &f11};
   /* Enable every feature the driver has (the shader decides what it uses), except
    * robustBufferAccess, which changes code generation in RADV 22.3 (radv_device.c sets
    * device->robust_buffer_access from it); --robust-buffer-access turns it on. The
    * VK_EXT_robustness2 feature struct is not chained, so robustBufferAccess2 stays off. */
   vkGetPhysicalDeviceFeatures2(pd, &f2);
   f2.features.robustBufferAccess = robust ? VK_TRUE : VK_FALSE;
   fprintf(facts, "robust_buffer_access=%u\n", robust);
   if (!pef.pipelineExecutableInfo) {
      fprintf(stderr, "radv_null_compile: driver lacks VK_KHR_pipeline_executable_properties\n");
      return 1;
   }
   float prio = 1.0f;
   VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = qfi,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
   const char *exts[] = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
   VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f2,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qci,
                             .enabledExtensionCount = 1,
                             .ppEnabledExtensionNames = exts};
   VkDevice dev;
   CHECK(vkCreateDevice(pd, &dci, NULL, &dev));

   size_t spv_size;
   uint32_t *spv = read_file(spv_path, &spv_size);
   VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = spv_size,
                                    .pCode = spv};
   VkShaderModule sm;
   CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));

   /* One set layout per set index up to the highest used one; gaps get empty layouts. */
   unsigned num_sets = 0;
   for (unsigned i = 0; i < num_bindings; i++)
      if (bindings[i].set + 1 > num_sets)
         num_sets = bindings[i].set + 1;
   VkDescriptorSetLayout set_layouts[MAX_SETS];
   for (unsigned s = 0; s < num_sets; s++) {
      VkDescriptorSetLayoutBinding lb[MAX_BINDINGS];
      unsigned nb = 0;
      for (unsigned i = 0; i < num_bindings; i++) {
         if (bindings[i].set != s)
            continue;
         lb[nb++] = (VkDescriptorSetLayoutBinding){bindings[i].binding, bindings[i].type,
                                                   bindings[i].count,
                                                   VK_SHADER_STAGE_COMPUTE_BIT, NULL};
         fprintf(facts, "layout.binding=%u:%u:%d:%u\n", s, bindings[i].binding,
                 (int)bindings[i].type, bindings[i].count);
      }
      VkDescriptorSetLayoutCreateInfo dslci = {
         .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
         .bindingCount = nb,
         .pBindings = lb};
      CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &set_layouts[s]));
   }
   VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
   VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = num_sets,
                                      .pSetLayouts = set_layouts,
                                      .pushConstantRangeCount = push_size ? 1 : 0,
                                      .pPushConstantRanges = &pcr};
   VkPipelineLayout pl;
   CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
   fprintf(facts, "layout.num_sets=%u\nlayout.push_size=%u\n", num_sets, push_size);

   VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = subgroup_size};
   VkSpecializationInfo spec = {num_spec, spec_map, num_spec * 4, spec_data};
   VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
               VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .pNext = subgroup_size ? &rss : NULL,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = entry,
                .pSpecializationInfo = num_spec ? &spec : NULL},
      .layout = pl};
   fprintf(facts, "required_subgroup_size=%u\n", subgroup_size);

   VkPipelineCacheCreateInfo pcci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
   VkPipelineCache cache;
   CHECK(vkCreatePipelineCache(dev, &pcci, NULL, &cache));
   VkPipeline pipe;
   CHECK(vkCreateComputePipelines(dev, cache, 1, &cpci, NULL, &pipe));
   /* Captured pipelines skip the cache; build the same pipeline uncaptured to fill it. */
   VkComputePipelineCreateInfo cpci2 = cpci;
   cpci2.flags = 0;
   VkPipeline pipe2;
   CHECK(vkCreateComputePipelines(dev, cache, 1, &cpci2, NULL, &pipe2));
   vkDestroyPipeline(dev, pipe2, NULL);

   PFN_vkGetPipelineExecutablePropertiesKHR get_props =
      (void *)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR");
   PFN_vkGetPipelineExecutableStatisticsKHR get_stats =
      (void *)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR");
   PFN_vkGetPipelineExecutableInternalRepresentationsKHR get_irs =
      (void *)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableInternalRepresentationsKHR");
   VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
   uint32_t ne = 0;
   CHECK(get_props(dev, &pinfo, &ne, NULL));
   VkPipelineExecutablePropertiesKHR ep[4];
   if (ne > 4)
      ne = 4;
   for (unsigned i = 0; i < 4; i++)
      ep[i] = (VkPipelineExecutablePropertiesKHR){
         .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
   CHECK(get_props(dev, &pinfo, &ne, ep));
   fprintf(facts, "executable_count=%u\n", ne);
   for (uint32_t e = 0; e < ne; e++) {
      fprintf(facts, "exe%u.name=%s\nexe%u.subgroup_size=%u\n", e, ep[e].name, e,
              ep[e].subgroupSize);
      VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                        .pipeline = pipe,
                                        .executableIndex = e};
      uint32_t ns = 0;
      CHECK(get_stats(dev, &ei, &ns, NULL));
      VkPipelineExecutableStatisticKHR *st = calloc(ns ? ns : 1, sizeof(*st));
      for (uint32_t i = 0; i < ns; i++)
         st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
      CHECK(get_stats(dev, &ei, &ns, st));
      for (uint32_t i = 0; i < ns; i++) {
         fprintf(facts, "exe%u.stat.%s=", e, st[i].name);
         switch (st[i].format) {
         case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
            fprintf(facts, "%llu\n", (unsigned long long)st[i].value.u64);
            break;
         case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
            fprintf(facts, "%lld\n", (long long)st[i].value.i64);
            break;
         case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
            fprintf(facts, "%.17g\n", st[i].value.f64);
            break;
         default:
            fprintf(facts, "%u\n", (unsigned)st[i].value.b32);
         }
      }
      free(st);

      uint32_t nr = 0;
      CHECK(get_irs(dev, &ei, &nr, NULL));
      VkPipelineExecutableInternalRepresentationKHR *ir = calloc(nr ? nr : 1, sizeof(*ir));
      for (uint32_t i = 0; i < nr; i++)
         ir[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
      CHECK(get_irs(dev, &ei, &nr, ir));
      for (uint32_t i = 0; i < nr; i++)
         ir[i].pData = calloc(ir[i].dataSize + 1, 1);
      CHECK(get_irs(dev, &ei, &nr, ir));
      for (uint32_t i = 0; i < nr; i++) {
         size_t len = ir[i].isText ? strnlen(ir[i].pData, ir[i].dataSize) : ir[i].dataSize;
         snprintf(path, sizeof path, "%s.exe%u.ir%u.txt", prefix, e, i);
         write_file(path, ir[i].pData, len);
         fprintf(facts, "exe%u.ir%u.name=%s\nexe%u.ir%u.file=%s\n", e, i, ir[i].name, e, i, path);
         free(ir[i].pData);
      }
      free(ir);
   }

   size_t cache_size = 0;
   CHECK(vkGetPipelineCacheData(dev, cache, &cache_size, NULL));
   void *cache_data = malloc(cache_size ? cache_size : 1);
   CHECK(vkGetPipelineCacheData(dev, cache, &cache_size, cache_data));
   snprintf(path, sizeof path, "%s.cache", prefix);
   write_file(path, cache_data, cache_size);
   fprintf(facts, "cache_file=%s\ncache_size=%zu\nstatus=ok\n", path, cache_size);
   free(cache_data);

   vkDestroyPipeline(dev, pipe, NULL);
   vkDestroyPipelineCache(dev, cache, NULL);
   vkDestroyPipelineLayout(dev, pl, NULL);
   for (unsigned s = 0; s < num_sets; s++)
      vkDestroyDescriptorSetLayout(dev, set_layouts[s], NULL);
   vkDestroyShaderModule(dev, sm, NULL);
   vkDestroyDevice(dev, NULL);
   vkDestroyInstance(inst, NULL);
   fclose(facts);
   free(spv);
   return 0;
}
