/* bench/lavapipe_fullscreen.c: bench_sampling.py's baseline on lavapipe.  Runs one SPIR-V compute
 * shader with two sampled rgba8 images (set 0 bindings 0 and 1, combined image samplers:
 * nearest, clamp to edge) and one rgba8 storage image (binding 2), 16 bytes of push constants,
 * over GX x GY x 1 groups, REPEAT times; prints each dispatch's seconds (submit to idle) and
 * writes the storage image, tightly packed, to OUT.
 *
 *   lavapipe_fullscreen SHADER.spv OUT GX GY PUSHFILE REPEAT TEX0 W0 H0 TEX1 W1 H1 W H
 *
 * Images use optimal tiling, filled through staging buffers (vkCmdCopyBufferToImage).
 * Build: gcc -O1 -I tools/lavapipe_run -o lavapipe_fullscreen bench/lavapipe_fullscreen.c -lvulkan
 * Run with VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json. */
#define TOOL "lavapipe_fullscreen"
#include "lavapipe_common.h"
#include <time.h>

static VkPhysicalDeviceMemoryProperties mp;

static uint32_t mem_type(uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t t = 0; t < mp.memoryTypeCount; t++)
        if ((bits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & want) == want) return t;
    fprintf(stderr, TOOL ": no memory type\n");
    exit(1);
}

/* a host-visible buffer of n bytes, mapped */
static VkBuffer host_buffer(VkDevice dev, VkDeviceSize n, VkBufferUsageFlags usage, void **map)
{
    VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, n, usage, VK_SHARING_MODE_EXCLUSIVE };
    VkBuffer buf;
    CHECK(vkCreateBuffer(dev, &bci, NULL, &buf));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size,
        mem_type(mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) };
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
    CHECK(vkBindBufferMemory(dev, buf, mem, 0));
    CHECK(vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, map));
    return buf;
}

static VkImage make_image(VkDevice dev, uint32_t w, uint32_t h, VkImageUsageFlags usage, VkImageView *view)
{
    VkImageCreateInfo ici = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D,
                              VK_FORMAT_R8G8B8A8_UNORM, { w, h, 1 }, 1, 1, VK_SAMPLE_COUNT_1_BIT,
                              VK_IMAGE_TILING_OPTIMAL, usage, VK_SHARING_MODE_EXCLUSIVE, 0, NULL,
                              VK_IMAGE_LAYOUT_UNDEFINED };
    VkImage img;
    CHECK(vkCreateImage(dev, &ici, NULL, &img));
    VkMemoryRequirements mr;
    vkGetImageMemoryRequirements(dev, img, &mr);
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, mem_type(mr.memoryTypeBits, 0) };
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
    CHECK(vkBindImageMemory(dev, img, mem, 0));
    VkImageViewCreateInfo vci = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, img, VK_IMAGE_VIEW_TYPE_2D,
                                  VK_FORMAT_R8G8B8A8_UNORM, { 0, 0, 0, 0 }, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
    CHECK(vkCreateImageView(dev, &vci, NULL, view));
    return img;
}

static void barrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to,
                    VkAccessFlags src, VkAccessFlags dst, VkPipelineStageFlags ss, VkPipelineStageFlags ds)
{
    VkImageMemoryBarrier ib = { VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, src, dst, from, to,
                                VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, img,
                                { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
    vkCmdPipelineBarrier(cb, ss, ds, 0, 0, NULL, 0, NULL, 1, &ib);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 15) {
        fprintf(stderr, "usage: " TOOL " SHADER.spv OUT GX GY PUSHFILE REPEAT TEX0 W0 H0 TEX1 W1 H1 W H\n");
        return 2;
    }
    uint32_t gx = atoi(argv[3]), gy = atoi(argv[4]), repeat = atoi(argv[6]);
    uint32_t tw[2] = { atoi(argv[8]), atoi(argv[11]) }, th[2] = { atoi(argv[9]), atoi(argv[12]) };
    uint32_t w = atoi(argv[13]), h = atoi(argv[14]);
    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue q;
    uint32_t qfam;
    int rc = lvp_open(&inst, &pd, &dev, &q, &qfam);
    if (rc) return rc;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);

    VkImage tex[2], dst;
    VkImageView tview[2], dview;
    VkBuffer stage[2];
    for (int i = 0; i < 2; i++) {
        size_t n;
        void *data = read_file(argv[7 + 3 * i], &n);
        if (n != (size_t)tw[i] * th[i] * 4) { fprintf(stderr, TOOL ": texture %d size\n", i); return 2; }
        void *map;
        stage[i] = host_buffer(dev, n, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &map);
        memcpy(map, data, n);
        free(data);
        tex[i] = make_image(dev, tw[i], th[i], VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, &tview[i]);
    }
    dst = make_image(dev, w, h, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, &dview);
    void *out_map;
    VkBuffer out = host_buffer(dev, (VkDeviceSize)w * h * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &out_map);

    VkSamplerCreateInfo sci = { VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO, NULL, 0, VK_FILTER_NEAREST, VK_FILTER_NEAREST,
                                VK_SAMPLER_MIPMAP_MODE_NEAREST, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                                VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, 0.0f,
                                VK_FALSE, 1.0f, VK_FALSE, VK_COMPARE_OP_NEVER, 0.0f, VK_LOD_CLAMP_NONE,
                                VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK, VK_FALSE };
    VkSampler sampler;
    CHECK(vkCreateSampler(dev, &sci, NULL, &sampler));

    VkDescriptorSetLayoutBinding lb[3] = {
        { 0, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL },
        { 1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL },
        { 2, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL },
    };
    VkDescriptorSetLayoutCreateInfo lci = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, 3, lb };
    VkDescriptorSetLayout dsl;
    CHECK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl));
    size_t push_size;
    void *push = read_file(argv[5], &push_size);
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size };
    VkPipelineLayoutCreateInfo plci = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dsl, 1, &pcr };
    VkPipelineLayout pl;
    CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    VkPipeline pipe = lvp_pipeline(dev, argv[1], pl);

    VkDescriptorPoolSize ps[2] = { { VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 2 },
                                   { VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1 } };
    VkDescriptorPoolCreateInfo dpci = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, 2, ps };
    VkDescriptorPool dp;
    CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
    VkDescriptorSetAllocateInfo dsai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dp, 1, &dsl };
    VkDescriptorSet ds;
    CHECK(vkAllocateDescriptorSets(dev, &dsai, &ds));
    VkDescriptorImageInfo dii[3] = {
        { sampler, tview[0], VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL },
        { sampler, tview[1], VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL },
        { VK_NULL_HANDLE, dview, VK_IMAGE_LAYOUT_GENERAL },
    };
    for (uint32_t i = 0; i < 3; i++) {
        VkWriteDescriptorSet wds = { VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, ds, i, 0, 1,
                                     i < 2 ? VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                                     &dii[i], NULL, NULL };
        vkUpdateDescriptorSets(dev, 1, &wds, 0, NULL);
    }

    VkCommandPoolCreateInfo cpi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, qfam };
    VkCommandPool cp;
    CHECK(vkCreateCommandPool(dev, &cpi, NULL, &cp));
    VkCommandBufferAllocateInfo cbai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, cp,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 3 };
    VkCommandBuffer cb[3];
    CHECK(vkAllocateCommandBuffers(dev, &cbai, cb));
    VkCommandBufferBeginInfo cbbi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    const VkPipelineStageFlags TOP = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, XFER = VK_PIPELINE_STAGE_TRANSFER_BIT,
                               CS = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    /* 0: uploads and layouts */
    CHECK(vkBeginCommandBuffer(cb[0], &cbbi));
    for (int i = 0; i < 2; i++) {
        barrier(cb[0], tex[i], VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                VK_ACCESS_TRANSFER_WRITE_BIT, TOP, XFER);
        VkBufferImageCopy bic = { 0, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 }, { 0, 0, 0 }, { tw[i], th[i], 1 } };
        vkCmdCopyBufferToImage(cb[0], stage[i], tex[i], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &bic);
        barrier(cb[0], tex[i], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT, XFER, CS);
    }
    barrier(cb[0], dst, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT, TOP, CS);
    CHECK(vkEndCommandBuffer(cb[0]));
    /* 1: the pass */
    CHECK(vkBeginCommandBuffer(cb[1], &cbbi));
    vkCmdBindPipeline(cb[1], VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb[1], VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, NULL);
    vkCmdPushConstants(cb[1], pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size, push);
    vkCmdDispatch(cb[1], gx, gy, 1);
    CHECK(vkEndCommandBuffer(cb[1]));
    /* 2: read the render target back */
    CHECK(vkBeginCommandBuffer(cb[2], &cbbi));
    barrier(cb[2], dst, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_SHADER_WRITE_BIT,
            VK_ACCESS_TRANSFER_READ_BIT, CS, XFER);
    VkBufferImageCopy bic = { 0, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 }, { 0, 0, 0 }, { w, h, 1 } };
    vkCmdCopyImageToBuffer(cb[2], dst, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, out, 1, &bic);
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(cb[2], XFER, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(cb[2]));

    for (uint32_t r = 0; r < repeat + 2; r++) {
        uint32_t k = r == 0 ? 0 : r == repeat + 1 ? 2 : 1;
        VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb[k] };
        double t0 = now();
        CHECK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
        CHECK(vkQueueWaitIdle(q));
        if (k == 1) printf("dispatch_s %.6f\n", now() - t0);
    }
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(out_map, 1, (size_t)w * h * 4, f) != (size_t)w * h * 4) { perror(argv[2]); return 1; }
    fclose(f);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    return 0;
}
