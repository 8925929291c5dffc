// What every store epilogue's parameter block shares, declared once for C++ and GLSL
// (offset_epilogue.h, ops/dot/dot_epilogue.h).
#ifndef NXV_STORE_EPILOGUE_H
#define NXV_STORE_EPILOGUE_H

// The most tensors an epilogue reads besides the product (the chain's inputs 1..).
#define NXV_EPILOGUE_TENSORS 4

#endif
