/* streaming.c - yield/await: the entry block hands a frame to consumer
 * blocks that run on their own threads while it keeps working, then takes
 * the result back. `normalize` mutates the frame (the one mutator allowed);
 * `energy` only reads it; each sees the value the entry yielded.
 *
 *   ./build/examples/streaming */
#include "../openinfer.h"

#include <stdio.h>
#include <string.h>

OI_GRAPH(stream,
  OI_DYNAMIC( OI_VAR(frame, f32[8]) )
  OI_CONSTANT( OI_VAR(gain, f32, @init(0.5)) OI_VAR(bias, f32, @init(1.0)) )
  OI_VOLATILE( OI_VAR(side, f32[8]) OI_VAR(power, f32[1]) OI_VAR(out, f32[8]) )
  OI_BLOCK(entry,
    OI_YIELD(frame)
    OI_OP(add, side, bias) OI_TO(side)      /* runs while the consumers work */
    OI_AWAIT(frame)
    OI_OP(add, frame, side) OI_TO(out)
    OI_RETURN()
  )
  OI_BLOCK(normalize,
    OI_AWAIT(frame)
    OI_OP(mul, frame, gain) OI_TO(frame)
    OI_YIELD(frame)
  )
  OI_BLOCK(energy,
    OI_AWAIT(frame)
    OI_OP(mul, frame, frame) OI_TO(out)
    OI_OP(sum_axis, out, axes=[0], keepdims=true) OI_TO(power)
    OI_YIELD(frame)
  )
)

int main(void) {
    oi_simulator_desc desc = {.device = OI_DEVICE_AUTO, .trace = true};
    oi_simulator *sim = oi_simulator_new_desc(NULL, &desc);
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, stream()) : NULL;
    int rc = exec ? 0 : 1;
    for (int step = 0; step < 3 && !rc; step++) {
        float frame[8];
        for (int i = 0; i < 8; i++)
            frame[i] = (float)(step * 8 + i);
        OI_INSERT(exec, frame, frame, 8);
        if (oi_executor_run_step(exec) != OI_OK) {
            rc = 1;
            break;
        }
        OI_FETCH(exec, out, f32);
        printf("step %d: out = frame * 0.5 + 1 = [%g, %g, ..., %g]\n", step, (double)out.data[0], (double)out.data[1],
               (double)out.data[7]);
    }
    if (!rc) { /* the consumers' events are in the trace */
        char *trace = oi_executor_trace_json(exec);
        int consumer_events = 0;
        for (const char *p = trace; p && (p = strstr(p, "\"block_name\": \"")) != NULL; p++)
            consumer_events += strncmp(p + 15, "entry", 5) != 0;
        printf("trace: %d events from consumer blocks\n", consumer_events);
        oi_free(trace);
    } else {
        fprintf(stderr, "streaming: %s\n", oi_last_error());
    }
    oi_executor_free(exec);
    oi_simulator_free(sim);
    return rc;
}
