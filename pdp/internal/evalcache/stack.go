package evalcache

// evalStackBytes is the goroutine stack an evaluation is given before it
// starts. Topdown evaluates a rule by recursion, tens of frames deep per
// rule, and a request's goroutine starts with a few KiB of stack: left
// alone, Go doubles and copies that stack again and again during the
// first evaluation on every new goroutine (each copy walks every frame).
// Growing it once, while it is still shallow, is two copies of a few
// frames (what that saves: docs/performance.md).
const evalStackBytes = 128 << 10

// GrowStack makes the calling goroutine's stack at least evalStackBytes
// deep: it calls frames of stackFrameBytes that deep, so the runtime
// grows the stack to fit them while it holds little else, and the stack
// keeps that size until the goroutine ends (or a garbage collection
// finds most of it unused).
func GrowStack() { growFrames(evalStackBytes / stackFrameBytes) }

// stackFrameBytes is one frame of growStack: under the compiler's limit
// for a variable on the stack (larger ones are moved to the heap).
const stackFrameBytes = 64 << 10

//go:noinline
func growFrames(n int) {
	var frame [stackFrameBytes]byte
	touch(frame[:])
	if n > 1 {
		growFrames(n - 1)
	}
}

// touch keeps the frame from being optimised away; it does not let it
// escape, so the frame stays on the stack.
//
//go:noinline
func touch(b []byte) { b[len(b)-1] = 0 }
