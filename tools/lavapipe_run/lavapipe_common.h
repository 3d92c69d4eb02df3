/* Shared by lavapipe_run.c and lavapipe_sample.c (same directory) and bench/lavapipe_fullscreen.c: define TOOL (the program's
 * name, for messages) before including.  Opens Mesa's lavapipe (refusing any other Vulkan
 * device: the expected results must come from the CPU driver) and makes the host-visible storage
 * buffers both tools take as --binding SET:BINDING:BYTES[:FILE]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define MAXB 16
#define CHECK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { \
    fprintf(stderr, TOOL ": %s failed: %d\n", #x, r_); exit(1); } } while (0)

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = calloc(1, n ? n : 1);
    if (n && fread(p, 1, n, f) != (size_t)n) { perror(path); exit(1); }
    fclose(f);
    *size = n;
    return p;
}

/* A compute pipeline of the SPIR-V in file `spv` (entry point "main") with layout `pl`. */
static VkPipeline lvp_pipeline(VkDevice dev, const char *spv, VkPipelineLayout pl)
{
    size_t code_size;
    void *code = read_file(spv, &code_size);
    VkShaderModuleCreateInfo smci = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, code_size, code };
    VkShaderModule sm;
    CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));
    VkComputePipelineCreateInfo cpci = { VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_COMPUTE_BIT, sm, "main", NULL },
        pl, VK_NULL_HANDLE, 0 };
    VkPipeline pipe;
    CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));
    return pipe;
}

struct binding { unsigned set, binding; VkDeviceSize size; const char *file;
                 int format; /* the VkFormat of a storage texel buffer; 0: a storage buffer */
                 VkBuffer buf; VkDeviceMemory mem; void *map; VkBufferView view; };

/* The instance, lavapipe's device with its compute queue (int64 atomics, int64, float64 on);
 * 0, or the tool's exit status (3: no lavapipe). */
static int lvp_open(VkInstance *inst, VkPhysicalDevice *pd, VkDevice *dev, VkQueue *q, uint32_t *qfam)
{
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, TOOL, 1, NULL, 0,
                              VK_API_VERSION_1_2 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app };
    CHECK(vkCreateInstance(&ici, NULL, inst));
    uint32_t npd = 1;
    VkResult er = vkEnumeratePhysicalDevices(*inst, &npd, pd);
    if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || npd == 0) {
        fprintf(stderr, TOOL ": no Vulkan device\n");
        return 3;
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(*pd, &props);
    if (!strstr(props.deviceName, "llvmpipe")) {
        fprintf(stderr, TOOL ": device is %s, not lavapipe (set VK_ICD_FILENAMES)\n",
                props.deviceName);
        return 3;
    }
    fprintf(stderr, TOOL ": %s, driver 0x%x\n", props.deviceName, props.driverVersion);

    uint32_t nq = 8;
    VkQueueFamilyProperties qf[8];
    vkGetPhysicalDeviceQueueFamilyProperties(*pd, &nq, qf);
    *qfam = 0;
    while (*qfam < nq && !(qf[*qfam].queueFlags & VK_QUEUE_COMPUTE_BIT)) (*qfam)++;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, *qfam, 1, &prio };
    VkPhysicalDeviceVulkan12Features f12 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
    f12.shaderBufferInt64Atomics = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12 };
    f2.features.shaderInt64 = VK_TRUE;
    f2.features.shaderFloat64 = VK_TRUE;
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2, 0, 1, &qci };
    CHECK(vkCreateDevice(*pd, &dci, NULL, dev));
    vkGetDeviceQueue(*dev, *qfam, 0, q);
    return 0;
}

/* Each binding's buffer in host-visible, coherent memory, mapped, zeroed, then filled from its
 * file (a texel-buffer view where it has a format); 0, or 1 on failure. */
static int lvp_make_buffers(VkPhysicalDevice pd, VkDevice dev, struct binding *b, unsigned nb)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (unsigned i = 0; i < nb; i++) {
        VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, b[i].size,
                                   b[i].format ? VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT
                                               : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                   VK_SHARING_MODE_EXCLUSIVE };
        CHECK(vkCreateBuffer(dev, &bci, NULL, &b[i].buf));
        VkMemoryRequirements mr;
        vkGetBufferMemoryRequirements(dev, b[i].buf, &mr);
        uint32_t t = 0;
        while (t < mp.memoryTypeCount && (!(mr.memoryTypeBits & (1u << t)) ||
               (mp.memoryTypes[t].propertyFlags & want) != want)) t++;
        if (t == mp.memoryTypeCount) { fprintf(stderr, TOOL ": no memory type\n"); return 1; }
        VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, t };
        CHECK(vkAllocateMemory(dev, &mai, NULL, &b[i].mem));
        CHECK(vkBindBufferMemory(dev, b[i].buf, b[i].mem, 0));
        CHECK(vkMapMemory(dev, b[i].mem, 0, b[i].size, 0, &b[i].map));
        memset(b[i].map, 0, b[i].size);
        if (b[i].file) {
            size_t n;
            void *d = read_file(b[i].file, &n);
            if (n > b[i].size) { fprintf(stderr, TOOL ": %s larger than its buffer\n", b[i].file); return 1; }
            memcpy(b[i].map, d, n);
            free(d);
        }
        if (b[i].format) {
            VkBufferViewCreateInfo vci = { VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, NULL, 0, b[i].buf,
                                           (VkFormat)b[i].format, 0, VK_WHOLE_SIZE };
            CHECK(vkCreateBufferView(dev, &vci, NULL, &b[i].view));
        }
    }
    return 0;
}
