defmodule Nx.Vulkan.Test.Doctests do
  @moduledoc false
  # The doctests of Nx left out where the backend runs them (eager, or through
  # Nx.Vulkan.Compiler), with why: documented rounding differences only.

  # Documented rounding differences only (each is also in EXLA's exclusions):
  #   * exp/1 - the device's exp is not correctly rounded: f64 exp(2) prints
  #     7.3890560989306495 instead of 7.38905609893065 (1 ulp).
  #   * logsumexp/2 - built on exp; its f32 results differ in the last digit printed
  #     (4.313262 instead of 4.3132615, 1 ulp).
  #   * sinh/1, cosh/1, atan/1, acos/1 (also excluded by EXLA), erf/1, acosh/1 (not excluded
  #     by EXLA, whose XLA kernels happen to round these points the other way): the engine's
  #     f64 kernels are within 1-2 ulp, not correctly rounded, and the doctests print all 17
  #     digits (e.g. f64 erf(1) prints 0.842700792949715 instead of 0.8427007929497149,
  #     acosh(3) 1.7627471740390859 instead of 1.762747174039086).
  #   * tan/1, atanh/1, expm1/1, erfc/1 (all also excluded by EXLA): f64 results 1 ulp away
  #     (tan(1) prints 1.557407724654902 instead of 1.5574077246549023, expm1(1)
  #     1.7182818284590453 instead of 1.718281828459045, erfc(3) 2.2090496998585445e-5
  #     instead of 2.2090496998585438e-5).
  #   * erf_inv/1 (also excluded by EXLA): the doctest prints Nx.BinaryBackend's f64 values,
  #     which come from a single-precision polynomial (erf_inv(0.10) = 0.08885598780483887
  #     there); the engine's f64 erf_inv is within 1 ulp of the exact 0.08885599049425769.
  # 13 exclusions; EXLA has 14.
  def nx_rounding_exclusions,
    do: [
      exp: 1,
      logsumexp: 2,
      sinh: 1,
      cosh: 1,
      atan: 1,
      acos: 1,
      erf: 1,
      acosh: 1,
      tan: 1,
      atanh: 1,
      expm1: 1,
      erfc: 1,
      erf_inv: 1
    ]

  # Documented rounding differences only (each is also in EXLA's exclusions): f32 dot sums
  # its products in f32 (Nx.BinaryBackend sums in f64 and rounds once), and these doctests print
  # results of chains of dots to the last digit: lu/1 (the product p.l.u prints 3.9999998 for
  # 4.0), least_squares/3 (0.11111107 for 0.111111075), cholesky/1 (1.5877134 for 1.5877135),
  # pinv/2 (-1.0000144 for -1.0000169), matrix_power/2 (negative powers through an inverse).
  # 5 exclusions; EXLA has 9 for rounding.
  def linalg_rounding_exclusions,
    do: [lu: 1, least_squares: 3, cholesky: 1, pinv: 2, matrix_power: 2]
end
