package io.redlease.jdbc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.asm.Label;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;

/**
 * Follows a method's operand stack, one slot per entry, marking the entries that hold {@code this},
 * so that a call's receiver can be told apart from a field or a parameter of the same type (a
 * self-injected proxy). Read with expanded frames, the stack is reset at each frame. When the stack
 * cannot be followed (an underflow, an instruction it does not know), every receiver counts as
 * {@code this}: the caller then refuses rather than lets a call through.
 */
abstract class ThisTracker extends MethodVisitor {

    private List<Boolean> stack = new ArrayList<>();

    /** The stacks that jumps left for their targets. */
    private final Map<Label, List<Boolean>> targets = new HashMap<>();

    /** Whether the instruction followed cannot fall through (a jump, return, throw or switch). */
    private boolean dead;

    private boolean thisInSlotZero;

    private boolean lost;

    ThisTracker(boolean isStatic) {
        super(SpringAsmInfo.ASM_VERSION);
        this.thisInSlotZero = !isStatic;
    }

    /** Hears a call of an instance method, and whether its receiver may be {@code this}. */
    abstract void call(String owner, String name, String descriptor, boolean receiverMayBeThis);

    @Override
    public void visitLabel(Label label) {
        List<Boolean> left = targets.remove(label);
        if (left != null) {
            if (dead) {
                stack = left;
            } else if (left.size() == stack.size()) {
                for (int i = 0; i < left.size(); i++) {
                    stack.set(i, stack.get(i) || left.get(i));
                }
            } else {
                lost = true;
            }
        }
        dead = false;
    }

    @Override
    public void visitFrame(int type, int numLocal, Object[] local, int numStack, Object[] frame) {
        List<Boolean> framed = new ArrayList<>();
        for (int i = 0; i < numStack; i++) {
            Object entry = frame[i];
            if (entry == Opcodes.LONG || entry == Opcodes.DOUBLE) {
                framed.add(false);
                framed.add(false);
            } else {
                framed.add(
                        entry instanceof String
                                || entry instanceof Label
                                || entry == Opcodes.UNINITIALIZED_THIS);
            }
        }
        if (framed.size() != stack.size()) {
            stack = framed;
            lost = false;
        }
    }

    @Override
    public void visitInsn(int opcode) {
        switch (opcode) {
            case Opcodes.NOP -> {}
            case Opcodes.ACONST_NULL,
                    Opcodes.ICONST_M1,
                    Opcodes.ICONST_0,
                    Opcodes.ICONST_1,
                    Opcodes.ICONST_2,
                    Opcodes.ICONST_3,
                    Opcodes.ICONST_4,
                    Opcodes.ICONST_5,
                    Opcodes.FCONST_0,
                    Opcodes.FCONST_1,
                    Opcodes.FCONST_2 ->
                    push(1);
            case Opcodes.LCONST_0, Opcodes.LCONST_1, Opcodes.DCONST_0, Opcodes.DCONST_1 -> push(2);
            case Opcodes.IALOAD,
                    Opcodes.FALOAD,
                    Opcodes.AALOAD,
                    Opcodes.BALOAD,
                    Opcodes.CALOAD,
                    Opcodes.SALOAD ->
                    effect(2, 1);
            case Opcodes.LALOAD, Opcodes.DALOAD -> effect(2, 2);
            case Opcodes.IASTORE,
                    Opcodes.FASTORE,
                    Opcodes.AASTORE,
                    Opcodes.BASTORE,
                    Opcodes.CASTORE,
                    Opcodes.SASTORE ->
                    effect(3, 0);
            case Opcodes.LASTORE, Opcodes.DASTORE -> effect(4, 0);
            case Opcodes.POP, Opcodes.MONITORENTER, Opcodes.MONITOREXIT -> effect(1, 0);
            case Opcodes.POP2 -> effect(2, 0);
            case Opcodes.DUP -> duplicate(1, 0);
            case Opcodes.DUP_X1 -> duplicate(1, 1);
            case Opcodes.DUP_X2 -> duplicate(1, 2);
            case Opcodes.DUP2 -> duplicate(2, 0);
            case Opcodes.DUP2_X1 -> duplicate(2, 1);
            case Opcodes.DUP2_X2 -> duplicate(2, 2);
            case Opcodes.SWAP -> {
                if (stack.size() < 2) {
                    lost = true;
                } else {
                    Boolean top = stack.remove(stack.size() - 1);
                    stack.add(stack.size() - 1, top);
                }
            }
            case Opcodes.IADD,
                    Opcodes.FADD,
                    Opcodes.ISUB,
                    Opcodes.FSUB,
                    Opcodes.IMUL,
                    Opcodes.FMUL,
                    Opcodes.IDIV,
                    Opcodes.FDIV,
                    Opcodes.IREM,
                    Opcodes.FREM,
                    Opcodes.ISHL,
                    Opcodes.ISHR,
                    Opcodes.IUSHR,
                    Opcodes.IAND,
                    Opcodes.IOR,
                    Opcodes.IXOR,
                    Opcodes.FCMPL,
                    Opcodes.FCMPG,
                    Opcodes.L2I,
                    Opcodes.L2F,
                    Opcodes.D2I,
                    Opcodes.D2F ->
                    effect(2, 1);
            case Opcodes.LADD,
                    Opcodes.DADD,
                    Opcodes.LSUB,
                    Opcodes.DSUB,
                    Opcodes.LMUL,
                    Opcodes.DMUL,
                    Opcodes.LDIV,
                    Opcodes.DDIV,
                    Opcodes.LREM,
                    Opcodes.DREM,
                    Opcodes.LAND,
                    Opcodes.LOR,
                    Opcodes.LXOR ->
                    effect(4, 2);
            case Opcodes.LSHL, Opcodes.LSHR, Opcodes.LUSHR -> effect(3, 2);
            case Opcodes.INEG,
                    Opcodes.FNEG,
                    Opcodes.I2F,
                    Opcodes.F2I,
                    Opcodes.I2B,
                    Opcodes.I2C,
                    Opcodes.I2S,
                    Opcodes.ARRAYLENGTH ->
                    effect(1, 1);
            case Opcodes.LNEG, Opcodes.DNEG, Opcodes.L2D, Opcodes.D2L -> effect(2, 2);
            case Opcodes.I2L, Opcodes.I2D, Opcodes.F2L, Opcodes.F2D -> effect(1, 2);
            case Opcodes.LCMP, Opcodes.DCMPL, Opcodes.DCMPG -> effect(4, 1);
            case Opcodes.IRETURN,
                    Opcodes.LRETURN,
                    Opcodes.FRETURN,
                    Opcodes.DRETURN,
                    Opcodes.ARETURN,
                    Opcodes.RETURN,
                    Opcodes.ATHROW ->
                    stack.clear();
            default -> lost = true;
        }
    }

    @Override
    public void visitIntInsn(int opcode, int operand) {
        if (opcode == Opcodes.NEWARRAY) {
            effect(1, 1);
        } else {
            push(1); // BIPUSH, SIPUSH
        }
    }

    @Override
    public void visitVarInsn(int opcode, int var) {
        switch (opcode) {
            case Opcodes.ILOAD, Opcodes.FLOAD -> push(1);
            case Opcodes.LLOAD, Opcodes.DLOAD -> push(2);
            case Opcodes.ALOAD -> stack.add(var == 0 && thisInSlotZero);
            case Opcodes.ISTORE, Opcodes.FSTORE -> effect(1, 0);
            case Opcodes.LSTORE, Opcodes.DSTORE -> effect(2, 0);
            case Opcodes.ASTORE -> {
                if (var == 0) {
                    thisInSlotZero = false;
                }
                effect(1, 0);
            }
            default -> {} // RET
        }
    }

    @Override
    public void visitTypeInsn(int opcode, String type) {
        switch (opcode) {
            case Opcodes.NEW -> push(1);
            case Opcodes.CHECKCAST -> {} // the same value, cast
            default -> effect(1, 1); // ANEWARRAY, INSTANCEOF
        }
    }

    @Override
    public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
        int size = Type.getType(descriptor).getSize();
        switch (opcode) {
            case Opcodes.GETSTATIC -> push(size);
            case Opcodes.PUTSTATIC -> effect(size, 0);
            case Opcodes.GETFIELD -> effect(1, size);
            default -> effect(1 + size, 0); // PUTFIELD
        }
    }

    @Override
    public void visitMethodInsn(
            int opcode, String owner, String name, String descriptor, boolean isInterface) {
        int arguments = (Type.getArgumentsAndReturnSizes(descriptor) >> 2) - 1;
        int returned = Type.getArgumentsAndReturnSizes(descriptor) & 0x3;
        if (opcode != Opcodes.INVOKESTATIC) {
            int receiver = stack.size() - arguments - 1;
            boolean mayBeThis = lost || receiver < 0 || stack.get(receiver);
            call(owner, name, descriptor, mayBeThis);
            arguments++;
        }
        effect(arguments, returned);
    }

    @Override
    public void visitInvokeDynamicInsn(
            String name, String descriptor, org.springframework.asm.Handle bootstrap, Object... a) {
        effect(
                (Type.getArgumentsAndReturnSizes(descriptor) >> 2) - 1,
                Type.getArgumentsAndReturnSizes(descriptor) & 0x3);
    }

    @Override
    public void visitJumpInsn(int opcode, Label label) {
        switch (opcode) {
            case Opcodes.GOTO -> dead = true;
            case Opcodes.JSR -> push(1);
            case Opcodes.IF_ICMPEQ,
                    Opcodes.IF_ICMPNE,
                    Opcodes.IF_ICMPLT,
                    Opcodes.IF_ICMPGE,
                    Opcodes.IF_ICMPGT,
                    Opcodes.IF_ICMPLE,
                    Opcodes.IF_ACMPEQ,
                    Opcodes.IF_ACMPNE ->
                    effect(2, 0);
            default -> effect(1, 0); // IFEQ ... IFLE, IFNULL, IFNONNULL
        }
        leave(label);
    }

    @Override
    public void visitLdcInsn(Object value) {
        push(value instanceof Long || value instanceof Double ? 2 : 1);
    }

    @Override
    public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
        effect(1, 0);
        leave(dflt, labels);
    }

    @Override
    public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
        effect(1, 0);
        leave(dflt, labels);
    }

    private void leave(Label dflt, Label... labels) {
        leave(dflt);
        for (Label label : labels) {
            leave(label);
        }
        dead = true;
    }

    /** Records the stack a jump leaves for its target. */
    private void leave(Label target) {
        List<Boolean> left = targets.get(target);
        if (left == null) {
            targets.put(target, new ArrayList<>(stack));
        } else if (left.size() == stack.size()) {
            for (int i = 0; i < left.size(); i++) {
                left.set(i, left.get(i) || stack.get(i));
            }
        } else {
            lost = true;
        }
    }

    @Override
    public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
        effect(dimensions, 1);
    }

    private void push(int slots) {
        for (int i = 0; i < slots; i++) {
            stack.add(false);
        }
    }

    private void effect(int popped, int pushed) {
        if (stack.size() < popped) {
            lost = true;
            stack.clear();
        } else {
            stack.subList(stack.size() - popped, stack.size()).clear();
        }
        push(pushed);
    }

    /** Copies the top {@code slots} entries below the {@code under} entries beneath them. */
    private void duplicate(int slots, int under) {
        if (stack.size() < slots + under) {
            lost = true;
            push(slots);
            return;
        }
        List<Boolean> top = new ArrayList<>(stack.subList(stack.size() - slots, stack.size()));
        stack.addAll(stack.size() - slots - under, top);
    }
}
