! MAGMA's Fortran interface (rehearsal stand-in); built only when FORT is set.
subroutine magmaf_version(major, minor, micro)
  integer, intent(out) :: major, minor, micro
  major = 2; minor = 9; micro = 0
end subroutine
