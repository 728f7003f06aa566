// RUN: nnkiln opt %s -p "assign-physical-barriers{max-barriers=8}" | filecheck %s
// RUN: nnkiln opt %s -p "assign-physical-barriers{max-barriers=1}" | filecheck %s --check-prefix=ONE

// A chain alternating between two queues with 4 virtual barriers. Barrier 0's only consumer (t1)
// has finished before barrier 2's producer (t2) starts (t1 -> t2 through barrier 1), so id 0 is
// reused for barrier 2, likewise id 1 for barrier 3. Id 0 cannot serve barrier 1: t1 would wait on
// and update the same id. Two physical barriers remain.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: rt.barrier {id = 0 : i64}
// CHECK-NEXT: rt.barrier {id = 1 : i64}
// CHECK-NEXT: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>}
// CHECK: rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>}
// CHECK: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64: 0>}
// CHECK: rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>}
// CHECK: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64>}

// With one barrier no assignment works (a merge would make t1 both wait on and update it), so the
// schedule is serialised: every task on instance 0, FIFO order enforces the dependencies.
// ONE-LABEL: func.func @chain
// ONE-NOT: rt.barrier
// ONE-COUNT-5: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>}
func.func @chain() {
  rt.barrier {id = 0 : i64}
  rt.barrier {id = 1 : i64}
  rt.barrier {id = 2 : i64}
  rt.barrier {id = 3 : i64}
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64: 2>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 2>, updates = array<i64: 3>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 3>, updates = array<i64>} {
    rt.end
  }
  func.return
}

// Fan-in within the limit by merging: t0 and t1 (queues 0, 1) are each consumed by t2 and t3 on
// queue 2; with one id the two barriers merge (every producer precedes every consumer), so t2 and t3
// wait on the single merged barrier.
// ONE-LABEL: func.func @fan_in
// ONE-NEXT: rt.barrier {id = 0 : i64}
// ONE-NEXT: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>}
// ONE: rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64>, updates = array<i64: 0>}
// ONE: rt.task {executor = "cpu", executor_index = 2 : i64, waits = array<i64: 0>, updates = array<i64>}
// ONE: rt.task {executor = "cpu", executor_index = 2 : i64, waits = array<i64: 0>, updates = array<i64>}
func.func @fan_in() {
  rt.barrier {id = 0 : i64}
  rt.barrier {id = 1 : i64}
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64>, updates = array<i64: 1>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 2 : i64, waits = array<i64: 0>, updates = array<i64>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 2 : i64, waits = array<i64: 1>, updates = array<i64>} {
    rt.end
  }
  func.return
}
