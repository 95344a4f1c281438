/* A model of detail/lock.hpp's channel_lock, checked by Spin (scripts/check-model.sh).

   Every access to the lock is to its one word, `state`, so what C++'s memory model allows here
   is what coherence allows on one location: each thread's operations on the word take effect
   in one total order (the word's modification order), and a read may return a value older
   than the latest write of another thread only as if it had run earlier. The model therefore
   runs each step of the C++ code as one atomic step, in every interleaving, and adds the one
   delay that matters: the holder's release store may land later than the read that precedes
   it (a store buffer, or an interrupt between the two instructions), anywhere until the holder
   touches the word again. Everything a thread protects with the lock is ordered by the word's
   acquire and release operations: every acquisition reads a 0 written by a release (the store,
   or the exchange of the slow path) or the initial 0, which the model's `assert`s do not need
   to check.

   Checked:
   - mutual exclusion (`assert(inside == 1)`);
   - no thread is stranded asleep: with bounded sleeps (TIMEOUT defined, as in the code) no
     interleaving ends with a thread blocked, so Spin finds no invalid end state (starvation,
     which the lock does not rule out, is not checked: Spin's safety search sees deadlocks,
     not threads that lose every race);
   - the lost wake-up exists: without TIMEOUT (a futex sleep with no limit) Spin must find an
     invalid end state (a thread asleep with the lock free), which scripts/check-model.sh
     requires, so the model is known to see what it claims to check;
   - and it is the store's: with the exchange release (EXCHANGE_RELEASE), which is the lock's
     release wherever its sleeps have no time limit (std::atomic::wait, the condition-variable
     table: every platform but Linux), unbounded sleeps never strand a thread. The sleep
     itself is modelled as the futex's compare-and-sleep in one step, which std::atomic::wait
     and the table (a look at the word and the wait, both under one mutex) also provide. */

#define THREADS 3
#define ROUNDS 2

byte state = 0;          /* 0 unlocked, 1 locked, 2 locked and a thread may sleep */
byte inside = 0;         /* threads in the critical section */
bool asleep[THREADS];    /* in a futex wait on `state` */

/* The futex: FUTEX_WAIT(expected 2) compares and sleeps in one step; FUTEX_WAKE wakes one
   sleeper (any); a bounded sleep may also end by itself. */
inline futex_wait(me) {
    atomic { if :: state == 2 -> asleep[me] = true :: else -> skip fi }
    if
    :: asleep[me] ->
#ifdef TIMEOUT
        if
        :: atomic { !asleep[me] -> skip }            /* woken */
        :: atomic { asleep[me] -> asleep[me] = false } /* the limit passed */
        fi
#else
        atomic { !asleep[me] -> skip }                 /* woken, or never */
#endif
    :: else -> skip
    fi
}

inline futex_wake_one() {
    atomic {
        if
        :: asleep[0] -> asleep[0] = false
        :: asleep[1] -> asleep[1] = false
        :: asleep[2] -> asleep[2] = false
        :: else -> skip
        fi
    }
}

proctype thread(byte me) {
    byte round = 0;
    byte seen;
    bool pending = false; /* a release store not yet landed */

    do
    :: round == ROUNDS -> break
    :: else ->
        /* lock(): CAS 0 -> 1; else (after the spin, which adds no state) exchange(2) until it
           reads 0, sleeping on 2 in between. */
        atomic {
            if
            :: state == 0 -> state = 1; seen = 0
            :: else -> seen = 1
            fi
        }
        do
        :: seen == 0 -> break
        :: else ->
            atomic { seen = state; state = 2 }
            if
            :: seen == 0 -> break
            :: else -> futex_wait(me)
            fi
        od;

        atomic { inside++; assert(inside == 1) };
        inside--;

        /* unlock(): read; 1 -> store 0 (which may land later); 2 -> exchange(0), wake one. */
#ifdef EXCHANGE_RELEASE
        /* The release where sleeps have no time limit: one exchange, never a lost wake-up. */
        atomic { seen = state; state = 0 };
        if
        :: seen == 2 -> futex_wake_one()
        :: else -> skip
        fi;
#else
        seen = state;
        if
        :: seen == 1 -> pending = true
        :: else -> state = 0; futex_wake_one()
        fi;
#endif
        /* The pending store lands at the latest before this thread's next access to the
           word; it may land at any step of the other threads before that. */
        if
        :: pending -> atomic { state = 0; pending = false }
        :: else -> skip
        fi;
        round++
    od
}

init {
    atomic {
        run thread(0);
        run thread(1);
        run thread(2)
    }
}
