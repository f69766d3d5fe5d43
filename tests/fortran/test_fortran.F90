! The Fortran module (issue 19), at any number of ranks: a dataset written in
! Fortran order (each rank its columns) reads back element for element; the
! series veneer's particles and fields land where openPMD puts them; a netCDF
! variable over Fortran-order dimensions round-trips with its attributes; a
! flush and a close through the async wrapper return at once and complete at
! loom_wait; a bad call returns an error whose message names what is wrong.
!   test_fortran DIR ENGINE   (under mpirun)
program test_fortran
  use, intrinsic :: iso_c_binding
  use mpi
  use h5loom
  implicit none

  integer :: ierr, rank, nranks, provided, failures = 0, checks = 0
  character(len=512) :: dir, engine

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)  ! FUNNELED: the async wrapper (test_requests)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, dir)
  call get_command_argument(2, engine)

  call test_datasets()
  call test_requests()
  call test_series()
  call test_netcdf()

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write(*, '(a, a, a, i0, a, i0, a)') 'test_fortran (', trim(engine), '): ', checks, ' checks, ', &
    failures, ' failed on some rank'
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1

contains

  subroutine expect(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. cond) then
      failures = failures + 1
      write(0, '(a, i0, a, a, a, a)') 'rank ', rank, ': check failed: ', what, ' (last error: ', &
        loom_error_message() // ')'
    end if
  end subroutine

  subroutine ok(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    call expect(status == LOOM_OK, what)
  end subroutine

  function path_of(tag) result(p)
    character(len=*), intent(in) :: tag
    character(len=:), allocatable :: p
    character(len=600) :: buf
    write(buf, '(a, "/fortran-", a, "-", a, "-np", i0, a)') trim(dir), tag, trim(engine), nranks, '.h5'
    p = trim(buf)
  end function

  ! a(i, j): 3 rows, two columns per rank; rank r writes columns 2r+1 and 2r+2.
  subroutine test_datasets()
    type(loom_file) :: f
    type(loom_object) :: root, ds
    real(c_double) :: mine(3, 2), all(3, 2 * nranks)
    integer :: i, j
    do j = 1, 2
      do i = 1, 3
        mine(i, j) = 100d0 * i + (2 * rank + j)
      end do
    end do
    call ok(loom_file_create(path_of('dataset'), f, engine=trim(engine)), 'create a file')
    call ok(loom_file_root(f, root), 'the root group')
    call ok(loom_create_dataset(root, 'a', LOOM_FLOAT64, [3_c_int64_t, int(2 * nranks, c_int64_t)], ds), 'a dataset')
    call ok(loom_dataset_write(ds, mine, [1_c_int64_t, int(2 * rank + 1, c_int64_t)], [3_c_int64_t, 2_c_int64_t]), &
            'write my columns')
    call ok(loom_attr_write_text(ds, 'units', 'm'), 'a text attribute')
    call ok(loom_attr_write(ds, 'scale', [0.5d0, 2d0]), 'a numeric attribute')
    call ok(loom_object_close(ds), 'close the dataset')
    call ok(loom_object_close(root), 'close the root')
    call ok(loom_file_close(f), 'close the file')

    call ok(loom_file_open(path_of('dataset'), LOOM_MODE_READ, f, engine=trim(engine)), 'open the file')
    call ok(loom_file_root(f, root), 'the root group')
    call ok(loom_open_dataset(root, 'a', ds), 'open the dataset')
    all = -1
    call ok(loom_dataset_read(ds, all), 'read it whole')
    do j = 1, 2 * nranks
      do i = 1, 3
        call expect(all(i, j) == 100d0 * i + j, 'a(i, j) as written')
      end do
    end do
    call expect(loom_open_dataset(root, 'nope', ds) /= LOOM_OK, 'a missing dataset is an error')
    call expect(index(loom_error_message(), 'nope') > 0, 'the message names it')
    call ok(loom_object_close(root), 'close the root')
    call ok(loom_file_close(f), 'close the file')
  end subroutine

  ! Flush and close requests through the async wrapper over the engine: rank r
  ! writes column r+1 of a 4 x nranks array (copied: the array is reused at
  ! once); the flush and the close return at once and complete at loom_wait.
  subroutine test_requests()
    type(loom_file) :: f
    type(loom_object) :: root, ds
    type(loom_request) :: req
    real(c_double) :: column(4, 1), all(4, nranks)
    logical :: done
    integer :: i, j
    character(len=:), allocatable :: stack
    stack = '{"engine": "' // trim(engine) // '", "wrappers": ["async"]}'
    column(:, 1) = [(10d0 * rank + i, i = 1, 4)]
    call ok(loom_file_create(path_of('requests'), f, engine=stack), 'create a file through the async wrapper')
    call ok(loom_file_root(f, root), 'the root group')
    call ok(loom_create_dataset(root, 'c', LOOM_FLOAT64, [4_c_int64_t, int(nranks, c_int64_t)], ds), 'a dataset')
    call ok(loom_dataset_write(ds, column, [1_c_int64_t, int(rank + 1, c_int64_t)], [4_c_int64_t, 1_c_int64_t]), &
            'write my column')
    column = -1d0  ! copied by the write
    call ok(loom_file_flush_async(f, req), 'a flush that returns at once')
    call ok(loom_test(req, done), 'ask whether the flush is done')
    call ok(loom_wait(req), 'wait for the flush')
    call expect(.not. c_associated(req%p), 'the flush request is freed')
    call ok(loom_object_close(ds), 'close the dataset')
    call ok(loom_create_dataset(root, 'd', LOOM_FLOAT64, [4_c_int64_t, int(nranks, c_int64_t)], ds), 'a second one')
    call ok(loom_dataset_write(ds, column, [1_c_int64_t, int(rank + 1, c_int64_t)], [4_c_int64_t, 1_c_int64_t]), &
            'write my column of it')
    call ok(loom_object_close(ds), 'close the dataset')
    call ok(loom_object_close(root), 'close the root')
    call ok(loom_file_close_async(f, req), 'a close that returns at once')
    call expect(.not. c_associated(f%p), 'the file handle is freed')
    call ok(loom_test(req, done), 'ask whether the close is done')
    call expect(.not. done, 'the close waits for loom_wait')
    call ok(loom_wait(req), 'wait for the close')

    call ok(loom_file_open(path_of('requests'), LOOM_MODE_READ, f, engine=trim(engine)), 'open the file')
    call ok(loom_file_root(f, root), 'the root group')
    call ok(loom_open_dataset(root, 'c', ds), 'open the dataset')
    all = 0
    call ok(loom_dataset_read(ds, all), 'read it whole')
    do j = 1, nranks
      do i = 1, 4
        call expect(all(i, j) == 10d0 * (j - 1) + i, 'c(i, j) as written before the flush')
      end do
    end do
    call ok(loom_object_close(ds), 'close the dataset')
    call ok(loom_open_dataset(root, 'd', ds), 'open the second one')
    call ok(loom_dataset_read(ds, all), 'read it whole')
    call expect(all(1, 1) == -1d0 .and. all(4, nranks) == -1d0, 'd as written before the close')
    call ok(loom_object_close(ds), 'close the dataset')
    call ok(loom_object_close(root), 'close the root')
    call ok(loom_file_close(f), 'close the file')
  end subroutine

  ! Three electrons per rank and a 4 x nranks field, rank r writing its column.
  subroutine test_series()
    type(loom_series) :: s
    type(loom_step) :: st
    type(loom_particles) :: p
    type(loom_field) :: rho
    type(loom_file) :: f
    type(loom_object) :: root, ds
    integer(c_int64_t) :: offset, global, k
    real(c_double) :: x(3), column(4, 1), xs(3 * nranks), field(4, nranks)
    integer(c_int64_t) :: id(3)
    integer :: i
    do i = 1, 3
      x(i) = 10d0 * rank + i
      id(i) = 3 * rank + i
    end do
    column(:, 1) = [(1000d0 * rank + i, i = 1, 4)]
    call ok(loom_series_create(path_of('series'), LOOM_SERIES_OPENPMD, s, engine=trim(engine)), 'create a series')
    call ok(loom_series_write_step(s, 0_c_int64_t, 0d0, 0.5d0, st), 'step 0')
    call ok(loom_step_particles(st, 'electrons', p), 'the electrons')
    call ok(loom_particles_set_local_count(p, 3_c_int64_t, offset, global), 'three here')
    call expect(offset == 3 * rank .and. global == 3 * nranks, 'offset and global count')
    call ok(loom_particles_write(p, 'x', x), 'x')
    call ok(loom_particles_write(p, 'id', id), 'id')
    call ok(loom_step_create_field(st, 'rho', [4_c_int64_t, int(nranks, c_int64_t)], 1, LOOM_FLOAT64, rho), 'rho')
    call ok(loom_field_write(rho, 0, column, [1_c_int64_t, int(rank + 1, c_int64_t)]), 'my column of rho')
    call ok(loom_step_end(st), 'end the step')
    call ok(loom_field_free(rho), 'free rho')
    call ok(loom_particles_free(p), 'free the electrons')
    call ok(loom_step_free(st), 'free the step')
    call ok(loom_series_close(s), 'close the series')

    call ok(loom_file_open(path_of('series'), LOOM_MODE_READ, f, engine=trim(engine)), 'open the series file')
    call ok(loom_file_root(f, root), 'the root group')
    call ok(loom_open_dataset(root, '/data/0/particles/electrons/position/x', ds), 'openPMD position/x')
    call ok(loom_dataset_read(ds, xs), 'read x')
    do k = 1, 3 * nranks
      call expect(xs(k) == 10d0 * ((k - 1) / 3) + (mod(k - 1, 3_c_int64_t) + 1), 'x as written')
    end do
    call ok(loom_object_close(ds), 'close x')
    call ok(loom_open_dataset(root, '/data/0/meshes/rho', ds), 'openPMD mesh rho')
    call ok(loom_dataset_read(ds, field), 'read rho')
    do k = 1, nranks
      do i = 1, 4
        call expect(field(i, k) == 1000d0 * (k - 1) + i, 'rho as written')
      end do
    end do
    call ok(loom_object_close(ds), 'close rho')
    call ok(loom_object_close(root), 'close the root')
    call ok(loom_file_close(f), 'close the file')
  end subroutine

  ! v(x, y, time): x fastest; rank r writes row y = r + 1 of records 1 and 2.
  subroutine test_netcdf()
    type(loom_nc_file) :: nc
    integer :: x, y, t, v, varid
    integer(c_int32_t) :: row(5), all(5, nranks, 2)
    integer(c_int64_t) :: records
    character(len=32) :: units
    integer :: i, j, k
    call ok(loom_nc_create(path_of('netcdf'), nc, engine=trim(engine)), 'create a netCDF file')
    call ok(loom_nc_def_dim(nc, 'x', 5_c_int64_t, x), 'dimension x')
    call ok(loom_nc_def_dim(nc, 'y', int(nranks, c_int64_t), y), 'dimension y')
    call ok(loom_nc_def_dim(nc, 'time', LOOM_NC_UNLIMITED, t), 'dimension time')
    call expect(x == 1 .and. y == 2 .and. t == 3, 'dimension ids from 1')
    call ok(loom_nc_def_var(nc, 'v', LOOM_INT32, [x, y, t], v), 'variable v(x, y, time)')
    call ok(loom_nc_def_var_fill(nc, v, -7_c_int32_t), 'its fill value')
    call ok(loom_nc_put_att_text(nc, v, 'units', 'counts'), 'its units')
    call ok(loom_nc_put_att(nc, LOOM_NC_GLOBAL, 'version', [3_c_int32_t]), 'a global attribute')
    call ok(loom_nc_enddef(nc), 'data mode')
    call ok(loom_nc_set_records(nc, 2_c_int64_t), 'two records')
    do k = 1, 2
      if (k == 2 .and. rank == nranks - 1) cycle  ! stays fill
      row = [(100 * k + 10 * rank + i, i = 1, 5)]
      call ok(loom_nc_put_vara(nc, v, row, [1_c_int64_t, int(rank + 1, c_int64_t), int(k, c_int64_t)], &
                               [5_c_int64_t, 1_c_int64_t, 1_c_int64_t]), 'put my row')
    end do
    call ok(loom_nc_close(nc), 'close the netCDF file')

    call ok(loom_nc_open(path_of('netcdf'), LOOM_MODE_READ, nc, engine=trim(engine)), 'open it')
    call ok(loom_nc_inq_varid(nc, 'v', varid), 'find v')
    call expect(varid == v, 'the same id')
    call ok(loom_nc_inq_dimlen(nc, t, records), 'the records')
    call expect(records == 2, 'two records')
    call ok(loom_nc_get_att_text(nc, v, 'units', units), 'read the units')
    call expect(units == 'counts', 'units as written')
    call ok(loom_nc_get_vara(nc, v, all), 'read v whole')
    do k = 1, 2
      do j = 1, nranks
        do i = 1, 5
          if (k == 2 .and. j == nranks) then
            call expect(all(i, j, k) == -7, 'the fill value where nothing was written')
          else
            call expect(all(i, j, k) == 100 * k + 10 * (j - 1) + i, 'v(i, j, k) as written')
          end if
        end do
      end do
    end do
    call expect(loom_nc_inq_varid(nc, 'nope', varid) /= LOOM_OK, 'a missing variable is an error')
    call expect(index(loom_error_message(), "'nope'") > 0, 'the message names it')
    call ok(loom_nc_close(nc), 'close it')
  end subroutine

end program test_fortran
