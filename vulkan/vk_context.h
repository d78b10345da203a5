/* vk_context.h - the Vulkan backend's private types (included only by
 * vulkan_backend.c, inside #ifdef OPENINFER_VULKAN). */
#ifndef OPENINFER_VK_CONTEXT_H
#define OPENINFER_VK_CONTEXT_H

#define OI__VK_BLOCK_BYTES ((VkDeviceSize)64 << 20)   /* device-local blocks          */
#define OI__VK_STAGING_BYTES ((VkDeviceSize)16 << 20) /* host-visible staging blocks  */
#define OI__VK_STAGING_LIMIT ((VkDeviceSize)256 << 20) /* submit early past this much */
#define OI__VK_PUSH_WORDS 32                          /* 128 bytes: the guaranteed minimum */
#define OI__VK_BINDINGS 8                             /* a, b, c, d (written), e..h   */
#define OI__VK_WRITE_BINDING 3                        /* d: what a dispatch writes    */
#define OI__VK_MAX_INPUTS 8                           /* operands of one run_op       */
#define OI__VK_MAX_STAGES 8                           /* dispatches of one op         */
#define OI__VK_SET_CACHE_LIMIT 4096                   /* cached descriptor sets       */
#define OI__VK_MAX_TIMES 4096                         /* GPU op times kept until taken */

/* Shrinking an stb array never allocates: no need for arrsetlen (which may). */
#define OI__VK_TRUNCATE(a, n) do { if (a) stbds_header(a)->length = (size_t)(n); } while (0)
#define OI__VK_CLEAR(a) OI__VK_TRUNCATE(a, 0)

/* The shader families of vk_ops.c, one per vulkan/shaders/<name>.comp ... */
typedef enum oi__vk_family {
    OI__VK_ELTWISE, OI__VK_REDUCE, OI__VK_MATMUL, OI__VK_ELTWISE_WIDE, OI__VK_REDUCE_WIDE
} oi__vk_family;

/* Every SPIR-V module: X(ENUM_SUFFIX, spirv name as vulkan/meson.build
 * builds it). The first fifteen are family * 3 + input value class (floats,
 * signed, unsigned), which oi__vk_shader_for relies on. The other op
 * families (vk_ops_<family>.c) list their modules in their own lines. */
#define OI__VK_SHADERS_CORE(X) \
    X(ELTWISE_F, eltwise_f) X(ELTWISE_S, eltwise_s) X(ELTWISE_U, eltwise_u) \
    X(REDUCE_F, reduce_f) X(REDUCE_S, reduce_s) X(REDUCE_U, reduce_u) \
    X(MATMUL_F, matmul_f) X(MATMUL_S, matmul_s) X(MATMUL_U, matmul_u) \
    X(ELTWISE_WIDE_F, eltwise_wide_f) X(ELTWISE_WIDE_S, eltwise_wide_s) X(ELTWISE_WIDE_U, eltwise_wide_u) \
    X(REDUCE_WIDE_F, reduce_wide_f) X(REDUCE_WIDE_S, reduce_wide_s) X(REDUCE_WIDE_U, reduce_wide_u) \
    X(MATMUL_BIG_F, matmul_big_f) /* 128x128 blocks for large float products */ \
    X(MATMUL_DIRECT_F, matmul_direct_f) /* float products on a CPU device, no shared tiles */ \
    X(ROWNORM_F, rownorm_f)       /* softmax, log_softmax, layer_norm, rms_norm */ \
    X(MATMUL_COOPMAT, matmul_coopmat) /* f16 on tensor cores (has_coopmat_f16 only) */ \
    X(MATMUL_COOPMAT_KHR, matmul_coopmat_khr) /* the same module as SPV_KHR_cooperative_matrix */

/* vk_ops_shape.c */
#define OI__VK_SHADERS_SHAPE(X) \
    X(COPY, copy)     /* strided copies: layout ops, tile, concat */ \
    X(PAD, pad)       /* pad, every mode */ \
    X(GATHER, gather) /* gather with 8..64-bit indices */ \
    X(GEMM_EPILOGUE, gemm_epilogue) /* alpha * product + beta * C */

/* vk_ops_nn.c */
#define OI__VK_SHADERS_NN(X) \
    X(CHNORM, chnorm) X(ROPE, rope) X(ATTENTION, attention) X(TOPK, topk) X(MATMUL_QUANT, matmul_quant) \
    X(MATVEC_QUANT, matvec_quant) /* matmul_q4 of few rows, q8_0, 8-bit activations */ \
    X(DEQUANTIZE, dequantize)     /* rows of ggml blocks as f32 */

/* vk_ops_conv.c */
#define OI__VK_SHADERS_CONV(X) \
    X(CONV, conv_f)               /* conv1d, conv2d, conv_transpose2d: 64x64 blocks */ \
    X(CONV_NARROW, conv_narrow_f) /* the same for groups of <= 16 output channels */ \
    X(CONV_DIRECT, conv_direct_f) /* an output per invocation: groups of 1 or 2 */ \
    X(POOL, pool)                 /* max_pool2d, avg_pool2d */

#define OI__VK_SHADER_LIST(X) OI__VK_SHADERS_CORE(X) OI__VK_SHADERS_SHAPE(X) OI__VK_SHADERS_NN(X) OI__VK_SHADERS_CONV(X)

#define OI__VK_SHADER_ENUM(suffix, spirv) OI__VK_SHADER_##suffix,
typedef enum oi__vk_shader { OI__VK_SHADER_LIST(OI__VK_SHADER_ENUM) OI__VK_SHADER_COUNT } oi__vk_shader;
#undef OI__VK_SHADER_ENUM

typedef struct oi__vk_range {
    VkDeviceSize offset, size;
} oi__vk_range;

/* One VkDeviceMemory bound to one VkBuffer; device blocks are carved up by
 * a first-fit free list, host blocks (staging) by a bump pointer. */
typedef struct oi__vk_block {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    VkDeviceSize used;         /* host blocks: bump pointer         */
    void *mapped;              /* host blocks: the mapping          */
    oi__vk_range *free_ranges; /* device blocks: sorted, coalesced  */
} oi__vk_block;

/* Device bytes: a piece of one of our blocks, or a user's VkBuffer
 * (block < 0). storage->device points at one of these. */
typedef struct oi__vk_buffer {
    VkBuffer buffer;
    VkDeviceSize offset, size;
    int block;             /* index in ctx->blocks; -1: not ours        */
    bool weight;           /* a model weight: kept until the context dies */
    uint64_t write_epoch;  /* written since barrier epoch N             */
    uint64_t read_epoch;   /* read since barrier epoch N                */
} oi__vk_buffer;

/* Host-visible linear memory (uploads or readbacks), reset per submission. */
typedef struct oi__vk_arena {
    oi__vk_block *blocks; /* stb array */
    bool readback;        /* prefer HOST_CACHED memory */
} oi__vk_arena;

/* A recorded command. Lists of these are compared byte for byte to decide
 * whether last step's command buffer can be replayed, so every field is
 * set from zeroed memory and nothing step-specific (like host pointers or
 * op sequence numbers) lives here. */
typedef enum oi__vk_cmd_kind { OI__VK_CMD_DISPATCH = 1, OI__VK_CMD_BARRIER, OI__VK_CMD_COPY } oi__vk_cmd_kind;
typedef struct oi__vk_cmd {
    uint32_t kind;
    uint32_t push_size;
    uint32_t groups[3];
    uint32_t first_barrier, n_barriers; /* BARRIER: range in list.barriers */
    uint32_t timestamp;                 /* DISPATCH: 1 + query written after it */
    VkPipeline pipeline;
    VkDescriptorSet set;
    VkBuffer src, dst;                  /* COPY */
    VkDeviceSize src_offset, dst_offset, size;
    uint32_t push[OI__VK_PUSH_WORDS];
} oi__vk_cmd;

/* A readback to finish once the submission completes. */
typedef struct oi__vk_readback {
    oi__storage *storage;
    const void *src; /* in a readback arena block */
    size_t nbytes;
} oi__vk_readback;

/* Which run_op a timestamped dispatch belongs to. */
typedef struct oi__vk_tag {
    uint64_t seq;
    oi_op op;
} oi__vk_tag;

/* What one submission holds: uploads first, then the compute stream, then
 * downloads. */
typedef struct oi__vk_list {
    oi__vk_cmd *uploads;
    oi__vk_cmd *cmds;
    oi__vk_cmd *downloads;
    VkBufferMemoryBarrier *barriers;
    /* not compared: */
    oi__vk_readback *readbacks;
    oi__vk_tag *tags;      /* one per timestamped dispatch */
    uint32_t n_timestamps;
} oi__vk_list;

/* A range written in the current barrier epoch. */
typedef struct oi__vk_written {
    VkBuffer buffer;
    VkDeviceSize offset, size;
} oi__vk_written;

/* A recorded command buffer and the list it was recorded from; a later
 * submission of an equal list replays it. */
#define OI__VK_SLOTS 16
/* A step's list goes to the GPU early, without waiting, once it holds
 * OI__VK_EARLY_MIN commands, or a quarter of those that went early before
 * it in the step when that is more (so the GPU starts while the host
 * records the rest, and a long step makes few submissions); at most
 * OI__VK_EARLY_MAX lists are in flight, the rest wait for the step's end. */
#define OI__VK_EARLY_MIN 16
#define OI__VK_EARLY_MAX (OI__VK_SLOTS - 4)
typedef struct oi__vk_slot {
    VkCommandBuffer cb;
    uint64_t hash;      /* of the list */
    uint64_t last_used; /* ctx->submit_clock when last submitted */
    VkQueryPool queries;
    uint32_t query_capacity;
    bool recorded;
    oi__vk_cmd *uploads, *cmds, *downloads; /* copies of the recorded list */
    VkBufferMemoryBarrier *barriers;
    /* submitted early and not yet waited for: not to be re-recorded or
     * submitted again before the step ends; its timestamps' ops */
    bool in_flight;
    oi__vk_tag *tags;
    uint32_t n_timestamps;
} oi__vk_slot;

typedef struct oi__vk_pipeline_key {
    uint32_t shader;
    uint32_t spec[5]; /* op, a, b, c, d dtypes (matvec_quant.comp: op, b, c its SPLIT, format and act_q8) */
} oi__vk_pipeline_key;
typedef struct oi__vk_pipeline_entry {
    oi__vk_pipeline_key key;
    VkPipeline value;
} oi__vk_pipeline_entry;

typedef struct oi__vk_set_key {
    VkBuffer buffer[OI__VK_BINDINGS];
    VkDeviceSize offset[OI__VK_BINDINGS];
    VkDeviceSize range[OI__VK_BINDINGS];
} oi__vk_set_key;
typedef struct oi__vk_set_entry {
    oi__vk_set_key key;
    VkDescriptorSet value;
} oi__vk_set_entry;

/* A model tensor's bytes: where they are mapped and how many. (16 bytes:
 * stb_ds hashes 4- and 8-byte keys with shifts UBSan rejects.) */
typedef struct oi__vk_weight_key {
    const void *data;
    uint64_t nbytes;
} oi__vk_weight_key;
typedef struct oi__vk_weight_entry {
    oi__vk_weight_key key;
    oi__vk_buffer *value;
} oi__vk_weight_entry;

/* VK_KHR_cooperative_matrix came with Vulkan-Headers 1.3.255; Debian
 * bookworm's are older, so the few declarations the backend uses are
 * repeated here (the registry's numbers; the NV enums are the same). */
#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
typedef struct VkCooperativeMatrixPropertiesKHR {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    VkComponentTypeNV AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeNV scope;
} VkCooperativeMatrixPropertiesKHR;
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(VkPhysicalDevice, uint32_t *,
                                                                                    VkCooperativeMatrixPropertiesKHR *);
#endif

/* The instance-level functions the backend calls, loaded per instance. */
typedef struct oi__vk_instance_fns {
    PFN_vkDestroyInstance vkDestroyInstance;
    PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2;
    PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2;
    PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
    PFN_vkGetPhysicalDeviceMemoryProperties2 vkGetPhysicalDeviceMemoryProperties2;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties;
    PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties;
    PFN_vkCreateDevice vkCreateDevice;
    PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr;
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;   /* NULL without the extension */
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV; /* or NULL */
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR; /* or NULL */
} oi__vk_instance_fns;

typedef struct oi__vk_device_caps {
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memory;
    bool has_int64, has_float64, has_fp16_math, has_int8_math, has_subgroup_arith;
    bool has_wide; /* shaderInt64 and shaderFloat64 enabled: eltwise_wide.comp runs */
    bool has_coopmat, has_memory_budget;
    /* matmul_coopmat.comp can run: VK_NV_cooperative_matrix with 16x16x16
     * f16 x f16 -> f32 at subgroup scope, shaderFloat16, the Vulkan memory
     * model (glslang's coopmat code needs it), 32-wide subgroups and 48 KiB
     * of shared memory; the device is created with all of these enabled */
    bool has_coopmat_f16;
    /* ... through VK_KHR_cooperative_matrix (matmul_coopmat_khr), where the
     * device offers that shape there too: its fragment types say which
     * operand they are, so the driver loads B as B (vk_device.c says more) */
    bool coopmat_khr;
    uint32_t subgroup_size;
    uint32_t queue_family;
    uint32_t timestamp_bits;
} oi__vk_device_caps;

typedef struct oi__vk_context {
    pthread_mutex_t lock; /* every entry point: the executor may free tensors on consumer threads */
    /* stage 1: instance and device */
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    bool owns_device; /* false: the user's handles, never destroyed here */
    oi__vk_instance_fns vki;  /* instance-level functions of `instance` */
    struct VolkDeviceTable vk; /* device-level functions of `device`     */
    oi__vk_device_caps caps;
    bool lost;        /* a fatal error (device lost): every call fails */
    bool has_user_buffers; /* a VkBuffer of the application was bound */
    VkDebugUtilsMessengerEXT messenger;  /* with OPENINFER_VULKAN_VALIDATION=1 */
    char last_validation_message[1024];
    /* stage 2: memory */
    uint32_t device_memory_type, upload_memory_type, readback_memory_type;
    oi__vk_block *blocks;            /* stb array: device-local blocks */
    oi__vk_arena uploads, readbacks;
    VkDeviceSize staged_bytes;       /* staged in the list being built */
    oi__vk_weight_entry *weights;    /* hash map: model bytes -> device copy */
    oi__vk_buffer **deferred_frees;  /* freed once the list is submitted */
    /* stage 3: pipelines and descriptors */
    VkShaderModule shaders[OI__VK_SHADER_COUNT];
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipeline_layout;
    VkPipelineCache pipeline_cache;
    oi__vk_pipeline_entry *pipelines; /* hash map */
    VkDescriptorPool *pools;          /* stb array; the last one has room */
    oi__vk_set_entry *sets;           /* hash map */
    /* stage 4: recording and submission */
    VkCommandPool command_pool;
    VkFence fence;
    oi__vk_list list;
    oi__vk_slot *slots;     /* stb array of at most OI__VK_SLOTS */
    int early[OI__VK_EARLY_MAX]; /* slots submitted early this step, in order */
    int n_early;
    uint64_t early_cmds;    /* commands they hold */
    bool early_submit;      /* OPENINFER_VULKAN_EARLY_SUBMIT is not 0 */
    uint64_t submit_clock;  /* counts submissions, for LRU slots */
    uint64_t epoch;         /* barrier epoch of the list being built */
    oi__vk_written *epoch_writes; /* ranges written in this epoch */
    uint64_t next_seq;      /* sequence number of the next run_op */
    oi__vulkan_op_time *times; /* stb array: GPU times not yet taken */
    oi__vulkan_stats stats;
} oi__vk_context;

#endif /* OPENINFER_VK_CONTEXT_H */
