/* lavapipe_run: run one SPIR-V compute shader on Mesa's lavapipe (the CPU Vulkan driver) and
 * write every storage buffer back to a file -- the expected results for wavelift's replays of
 * the same shader's RADV captures (tools/lavapipe_run/README.md).
 *
 *   lavapipe_run SHADER.spv OUTDIR --groups X,Y,Z [--push FILE]
 *                [--binding SET:BINDING:BYTES[:FILE]]...
 *                [--texel SET:BINDING:VKFORMAT:BYTES[:FILE]]...
 *
 * Every binding is a storage buffer of BYTES bytes (--texel: a storage texel buffer, viewed
 * whole in the VkFormat numbered VKFORMAT), filled from FILE (zeros after its end) or
 * with zeros; after the dispatch each is written to OUTDIR/set<S>_binding<B>.bin.  Run it with
 * VK_ICD_FILENAMES pointing at lavapipe's ICD; the device name is checked ("llvmpipe").
 * Build: gcc -O1 -Wall -o lavapipe_run lavapipe_run.c -lvulkan
 */
#define TOOL "lavapipe_run"
#include "lavapipe_common.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: lavapipe_run SHADER.spv OUTDIR --groups X,Y,Z [--push FILE] "
                        "[--binding SET:BINDING:BYTES[:FILE]]...\n");
        return 2;
    }
    const char *spv = argv[1], *outdir = argv[2], *push_file = NULL;
    unsigned gx = 1, gy = 1, gz = 1, nb = 0, nsets = 0;
    struct binding b[MAXB];
    memset(b, 0, sizeof b);
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--groups") && i + 1 < argc) {
            if (sscanf(argv[++i], "%u,%u,%u", &gx, &gy, &gz) != 3) return 2;
        } else if (!strcmp(argv[i], "--push") && i + 1 < argc) {
            push_file = argv[++i];
        } else if (!strcmp(argv[i], "--texel") && i + 1 < argc && nb < MAXB) {
            char *s = strdup(argv[++i]);
            unsigned long long size;
            int off = 0;
            if (sscanf(s, "%u:%u:%d:%llu%n", &b[nb].set, &b[nb].binding, &b[nb].format, &size, &off) < 4 ||
                b[nb].format <= 0) return 2;
            b[nb].size = size;
            b[nb].file = s[off] == ':' ? s + off + 1 : NULL;
            if (b[nb].set + 1 > nsets) nsets = b[nb].set + 1;
            nb++;
        } else if (!strcmp(argv[i], "--binding") && i + 1 < argc && nb < MAXB) {
            char *s = strdup(argv[++i]);
            unsigned long long size;
            int off = 0;
            if (sscanf(s, "%u:%u:%llu%n", &b[nb].set, &b[nb].binding, &size, &off) < 3) return 2;
            b[nb].size = size;
            b[nb].file = s[off] == ':' ? s + off + 1 : NULL;
            if (b[nb].set + 1 > nsets) nsets = b[nb].set + 1;
            nb++;
        } else {
            fprintf(stderr, "lavapipe_run: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (nsets > 4) return 2;

    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue q;
    uint32_t qfam;
    int rc = lvp_open(&inst, &pd, &dev, &q, &qfam);
    if (rc) return rc;
    if (lvp_make_buffers(pd, dev, b, nb)) return 1;

    size_t push_size = 0;
    void *push = push_file ? read_file(push_file, &push_size) : NULL;

    VkDescriptorSetLayout dsl[4];
    for (unsigned s = 0; s < nsets; s++) {
        VkDescriptorSetLayoutBinding lb[MAXB];
        unsigned n = 0;
        for (unsigned i = 0; i < nb; i++)
            if (b[i].set == s)
                lb[n++] = (VkDescriptorSetLayoutBinding){ b[i].binding, b[i].format
                                                          ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
                                                          : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                                          VK_SHADER_STAGE_COMPUTE_BIT, NULL };
        VkDescriptorSetLayoutCreateInfo lci = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, n, lb };
        CHECK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl[s]));
    }
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size };
    VkPipelineLayoutCreateInfo plci = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, nsets, dsl,
                                        push_size ? 1 : 0, &pcr };
    VkPipelineLayout pl;
    CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));

    VkPipeline pipe = lvp_pipeline(dev, spv, pl);

    VkDescriptorPoolSize ps[2] = { { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MAXB },
                                   { VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, MAXB } };
    VkDescriptorPoolCreateInfo dpci = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 4, 2, ps };
    VkDescriptorPool dp;
    CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
    VkDescriptorSet ds[4];
    if (nsets) {
        VkDescriptorSetAllocateInfo dsai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dp, nsets, dsl };
        CHECK(vkAllocateDescriptorSets(dev, &dsai, ds));
    }
    for (unsigned i = 0; i < nb; i++) {
        VkDescriptorBufferInfo dbi = { b[i].buf, 0, VK_WHOLE_SIZE };
        VkWriteDescriptorSet w = { VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, ds[b[i].set], b[i].binding, 0, 1,
                                   VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &dbi, NULL };
        if (b[i].format) {
            w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
            w.pBufferInfo = NULL;
            w.pTexelBufferView = &b[i].view;
        }
        vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
    }

    VkCommandPoolCreateInfo cpi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, qfam };
    VkCommandPool cp;
    CHECK(vkCreateCommandPool(dev, &cpi, NULL, &cp));
    VkCommandBufferAllocateInfo cbai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, cp,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkCommandBufferBeginInfo cbbi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    CHECK(vkBeginCommandBuffer(cb, &cbbi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (nsets)
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, nsets, ds, 0, NULL);
    if (push_size)
        vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size, push);
    vkCmdDispatch(cb, gx, gy, gz);
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb };
    CHECK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(q));

    for (unsigned i = 0; i < nb; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/set%u_binding%u.bin", outdir, b[i].set, b[i].binding);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b[i].map, 1, b[i].size, f) != b[i].size) { perror(path); return 1; }
        fclose(f);
    }
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    return 0;
}
