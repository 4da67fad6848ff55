/*
 * tokens.c — the token bucket that enforces an allocation (SLAQ §5).
 *
 * Each epoch a job receives allocation × T CPU-seconds of tokens; the CPU
 * time it reports is taken from them; with none left it is throttled until
 * the next refill. Unused tokens expire at the refill (the bucket holds at
 * most one epoch of credit), so idling cannot be saved up for a burst that
 * would take cores the allocator gave to others. Debt carries over: CPU
 * used beyond the tokens, which a late report can reveal, is subtracted
 * from the next epoch's grant.
 */
#include "slaq/slaq.h"

void slaq_tokens_refill(slaq_tokens *b, double alloc_cores, double epoch_s)
{
    double grant = alloc_cores > 0 && epoch_s > 0 ? alloc_cores * epoch_s : 0;
    if (b->balance > 0)
        b->balance = 0;
    b->balance += grant;
    b->granted = grant;
}

void slaq_tokens_consume(slaq_tokens *b, double cpu_s)
{
    if (cpu_s > 0)
        b->balance -= cpu_s;
}

int slaq_tokens_throttled(const slaq_tokens *b) { return !(b->balance > 0); }
