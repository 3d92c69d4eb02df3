/* lavapipe_sample: lavapipe_run (same directory) with one combined image sampler: run one
 * SPIR-V compute shader on Mesa's lavapipe with a sampled 2-D image and a sampler, plus storage
 * buffers, and write every storage buffer back -- the expected results for wavelift's sampling
 * (tests/execute/test_sampling_lavapipe.py, decision 0025).
 *
 *   lavapipe_sample SHADER.spv OUTDIR --groups X,Y,Z
 *                   --image SET:BINDING:VKFORMAT:WIDTH:HEIGHT:FILE
 *                   --sampler MAG:MIN:MIPMAP:ADDRESS_U:ADDRESS_V:BORDER:UNNORMALIZED
 *                   [--shape VIEWTYPE:DEPTH:LAYERS:LEVELS:BASELEVEL:LEVELCOUNT]
 *                   [--lod MINLOD:MAXLOD:BIAS] [--compare VKCOMPAREOP] [--address-w MODE]
 *                   [--binding SET:BINDING:BYTES[:FILE]]... [--storage]
 *
 * The image (optimal tiling; by default one level, one layer, a 2-D view) is filled from FILE
 * through a staging buffer and vkCmdCopyBufferToImage: level after level (each max(1, size >>
 * level) texels a side), in each level its layers (or 3-D slices) one after the other, rows of
 * texels tightly packed.  --shape: the VkImageViewType by number (1 2-D, 2 3-D, 3 cube, 5 2-D
 * array, 6 cube array; a 3-D view is of a 3-D image of DEPTH slices, the others of a 2-D image
 * of LAYERS layers, cube-compatible for the cube views: the faces are layers +X -X +Y -Y +Z -Z),
 * LEVELS levels, the view's BASELEVEL and LEVELCOUNT.  A depth format (D16_UNORM 124,
 * D32_SFLOAT 126) is copied and viewed through its depth aspect.  The sampler's fields are the
 * Vk enum values by number (VkFilter, VkSamplerMipmapMode, VkSamplerAddressMode, VkBorderColor;
 * UNNORMALIZED 0/1), minLod 0, maxLod VK_LOD_CLAMP_NONE, mipLodBias 0 unless --lod gives them
 * (floats), addressModeW CLAMP_TO_EDGE unless --address-w; --compare enables depth compare
 * with that VkCompareOp.  --storage: the image is a storage image instead (no sampler; layout
 * GENERAL; --sampler may be left out), and after the dispatch every level of every layer is
 * copied back, in the file's order, to OUTDIR/image.bin.  Buffers as lavapipe_run's.
 * Build: gcc -O1 -Wall -o lavapipe_sample lavapipe_sample.c -lvulkan
 */
#define TOOL "lavapipe_sample"
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
    unsigned iset = 0, ibinding = 0, iw = 0, ih = 0;
    int ifmt = 0, have_image = 0, smag = 0, smin = 0, smip = 0, su = 0, sv = 0, sborder = 0, sunnorm = 0;
    int sw = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, vtype = VK_IMAGE_VIEW_TYPE_2D, cmp_enable = 0, cmp_op = 0;
    unsigned idepth = 1, ilayers = 1, ilevels = 1, vbase = 0, vcount = 1, have_lod = 0, storage = 0;
    float min_lod = 0.0f, max_lod = VK_LOD_CLAMP_NONE, lod_bias = 0.0f;
    const char *ifile = NULL;
    struct binding b[MAXB];
    memset(b, 0, sizeof b);
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--groups") && i + 1 < argc) {
            if (sscanf(argv[++i], "%u,%u,%u", &gx, &gy, &gz) != 3) return 2;
        } else if (!strcmp(argv[i], "--push") && i + 1 < argc) {
            push_file = argv[++i];
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            int off = 0;
            if (sscanf(argv[++i], "%u:%u:%d:%u:%u:%n", &iset, &ibinding, &ifmt, &iw, &ih, &off) < 5 || !off)
                return 2;
            ifile = argv[i] + off;
            have_image = 1;
        } else if (!strcmp(argv[i], "--sampler") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d:%d:%d:%d:%d:%d:%d", &smag, &smin, &smip, &su, &sv, &sborder, &sunnorm) != 7)
                return 2;
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d:%u:%u:%u:%u:%u", &vtype, &idepth, &ilayers, &ilevels, &vbase, &vcount) != 6)
                return 2;
        } else if (!strcmp(argv[i], "--lod") && i + 1 < argc) {
            if (sscanf(argv[++i], "%f:%f:%f", &min_lod, &max_lod, &lod_bias) != 3) return 2;
            have_lod = 1;
        } else if (!strcmp(argv[i], "--compare") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d", &cmp_op) != 1) return 2;
            cmp_enable = 1;
        } else if (!strcmp(argv[i], "--storage")) {
            storage = 1;
        } else if (!strcmp(argv[i], "--address-w") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d", &sw) != 1) return 2;
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
            fprintf(stderr, "lavapipe_sample: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!have_image) { fprintf(stderr, "lavapipe_sample: --image is required\n"); return 2; }
    if (iset + 1 > nsets) nsets = iset + 1;
    if (nsets > 4) return 2;

    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue q;
    uint32_t qfam;
    int rc = lvp_open(&inst, &pd, &dev, &q, &qfam);
    if (rc) return rc;
    if (lvp_make_buffers(pd, dev, b, nb)) return 1;
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

    /* the sampled image: optimal tiling, filled through a staging buffer */
    size_t idata_size;
    void *idata = read_file(ifile, &idata_size);
    VkBufferCreateInfo sbci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, idata_size ? idata_size : 1,
                                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                VK_SHARING_MODE_EXCLUSIVE };
    VkBuffer stage;
    VkDeviceMemory stage_mem;
    void *stage_map;
    CHECK(vkCreateBuffer(dev, &sbci, NULL, &stage));
    {
        VkMemoryRequirements mr;
        vkGetBufferMemoryRequirements(dev, stage, &mr);
        uint32_t t = 0;
        while (t < mp.memoryTypeCount && (!(mr.memoryTypeBits & (1u << t)) ||
               (mp.memoryTypes[t].propertyFlags & want) != want)) t++;
        if (t == mp.memoryTypeCount) { fprintf(stderr, "lavapipe_sample: no memory type\n"); return 1; }
        VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, t };
        CHECK(vkAllocateMemory(dev, &mai, NULL, &stage_mem));
        CHECK(vkBindBufferMemory(dev, stage, stage_mem, 0));
        CHECK(vkMapMemory(dev, stage_mem, 0, VK_WHOLE_SIZE, 0, &stage_map));
        memcpy(stage_map, idata, idata_size);
    }
    int is3d = vtype == VK_IMAGE_VIEW_TYPE_3D;
    VkImageAspectFlags aspect = (ifmt == VK_FORMAT_D16_UNORM || ifmt == VK_FORMAT_D32_SFLOAT)
                                    ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT;
    if (is3d) ilayers = 1; else idepth = 1;
    int iscube = vtype == VK_IMAGE_VIEW_TYPE_CUBE || vtype == VK_IMAGE_VIEW_TYPE_CUBE_ARRAY;
    VkImageCreateInfo imci = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL,
                               iscube ? VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT : 0,
                               is3d ? VK_IMAGE_TYPE_3D : VK_IMAGE_TYPE_2D, (VkFormat)ifmt,
                               { iw, ih, idepth }, ilevels, ilayers, VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_TILING_OPTIMAL,
                               (storage ? VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                                        : VK_IMAGE_USAGE_SAMPLED_BIT) | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                               VK_SHARING_MODE_EXCLUSIVE, 0, NULL, VK_IMAGE_LAYOUT_UNDEFINED };
    VkImage image;
    VkDeviceMemory image_mem;
    CHECK(vkCreateImage(dev, &imci, NULL, &image));
    {
        VkMemoryRequirements mr;
        vkGetImageMemoryRequirements(dev, image, &mr);
        uint32_t t = 0;
        while (t < mp.memoryTypeCount && !(mr.memoryTypeBits & (1u << t))) t++;
        VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, t };
        CHECK(vkAllocateMemory(dev, &mai, NULL, &image_mem));
        CHECK(vkBindImageMemory(dev, image, image_mem, 0));
    }
    VkImageViewCreateInfo ivci = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, image, (VkImageViewType)vtype,
                                   (VkFormat)ifmt, { 0, 0, 0, 0 }, { aspect, vbase, vcount, 0, ilayers } };
    VkImageView iview;
    CHECK(vkCreateImageView(dev, &ivci, NULL, &iview));
    VkSamplerCreateInfo sci = { VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO, NULL, 0, (VkFilter)smag, (VkFilter)smin,
                                (VkSamplerMipmapMode)smip, (VkSamplerAddressMode)su, (VkSamplerAddressMode)sv,
                                (VkSamplerAddressMode)sw, lod_bias, VK_FALSE, 1.0f, cmp_enable ? VK_TRUE : VK_FALSE,
                                (VkCompareOp)cmp_op, min_lod, (sunnorm && !have_lod) ? 0.0f : max_lod,
                                (VkBorderColor)sborder, sunnorm ? VK_TRUE : VK_FALSE };
    VkSampler sampler;
    CHECK(vkCreateSampler(dev, &sci, NULL, &sampler));

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
        if (s == iset)
            lb[n++] = (VkDescriptorSetLayoutBinding){ ibinding, storage ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                                                        : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                      1, VK_SHADER_STAGE_COMPUTE_BIT, NULL };
        VkDescriptorSetLayoutCreateInfo lci = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, n, lb };
        CHECK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl[s]));
    }
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size };
    VkPipelineLayoutCreateInfo plci = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, nsets, dsl,
                                        push_size ? 1 : 0, &pcr };
    VkPipelineLayout pl;
    CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));

    VkPipeline pipe = lvp_pipeline(dev, spv, pl);

    VkDescriptorPoolSize ps[3] = { { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MAXB },
                                   { VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1 },
                                   { VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1 } };
    VkDescriptorPoolCreateInfo dpci = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 4, 3, ps };
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

    {
        VkDescriptorImageInfo dii = { storage ? VK_NULL_HANDLE : sampler, iview,
                                      storage ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL };
        VkWriteDescriptorSet w = { VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, ds[iset], ibinding, 0, 1,
                                   storage ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                           : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, &dii, NULL, NULL };
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
    {
        VkImageMemoryBarrier ib = { VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                    VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, image,
                                    { aspect, 0, ilevels, 0, ilayers } };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL,
                             0, NULL, 1, &ib);
        VkDeviceSize at = 0, texel = idata_size;
        {   /* bytes per texel: the file holds every level of every layer */
            unsigned long long n = 0;
            for (unsigned l = 0; l < ilevels; l++) {
                unsigned w = iw >> l ? iw >> l : 1, h = ih >> l ? ih >> l : 1, d = idepth >> l ? idepth >> l : 1;
                n += (unsigned long long)w * h * d * ilayers;
            }
            texel = n ? idata_size / n : 0;
            if (!texel || texel * n != idata_size) { fprintf(stderr, "lavapipe_sample: image file size\n"); return 2; }
        }
        for (unsigned l = 0; l < ilevels; l++) {
            unsigned w = iw >> l ? iw >> l : 1, h = ih >> l ? ih >> l : 1, d = idepth >> l ? idepth >> l : 1;
            VkBufferImageCopy bic = { at, 0, 0, { aspect, l, 0, ilayers }, { 0, 0, 0 }, { w, h, d } };
            vkCmdCopyBufferToImage(cb, stage, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &bic);
            at += (VkDeviceSize)w * h * d * ilayers * texel;
        }
        ib.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        ib.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | (storage ? VK_ACCESS_SHADER_WRITE_BIT : 0);
        ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        ib.newLayout = storage ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL,
                             0, NULL, 1, &ib);
    }
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (nsets)
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, nsets, ds, 0, NULL);
    if (push_size)
        vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size, push);
    vkCmdDispatch(cb, gx, gy, gz);
    if (storage) {  /* the storage image back into the staging buffer, in the file's order */
        VkImageMemoryBarrier ib = { VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT,
                                    VK_ACCESS_TRANSFER_READ_BIT, VK_IMAGE_LAYOUT_GENERAL,
                                    VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_QUEUE_FAMILY_IGNORED,
                                    VK_QUEUE_FAMILY_IGNORED, image, { aspect, 0, ilevels, 0, ilayers } };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL,
                             0, NULL, 1, &ib);
        VkDeviceSize at = 0;
        unsigned long long n = 0;
        for (unsigned l = 0; l < ilevels; l++) {
            unsigned w = iw >> l ? iw >> l : 1, h = ih >> l ? ih >> l : 1, d = idepth >> l ? idepth >> l : 1;
            n += (unsigned long long)w * h * d * ilayers;
        }
        VkDeviceSize texel = idata_size / n;
        for (unsigned l = 0; l < ilevels; l++) {
            unsigned w = iw >> l ? iw >> l : 1, h = ih >> l ? ih >> l : 1, d = idepth >> l ? idepth >> l : 1;
            VkBufferImageCopy bic = { at, 0, 0, { aspect, l, 0, ilayers }, { 0, 0, 0 }, { w, h, d } };
            vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, stage, 1, &bic);
            at += (VkDeviceSize)w * h * d * ilayers * texel;
        }
    }
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                           VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
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
    if (storage) {
        char path[4096];
        snprintf(path, sizeof path, "%s/image.bin", outdir);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(stage_map, 1, idata_size, f) != idata_size) { perror(path); return 1; }
        fclose(f);
    }
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    return 0;
}
